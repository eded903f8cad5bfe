// Package work validates Works before any agent sees them: manifests that are objects with
// an identity, no two manifests for one object, and feedback paths that parse. It is pure
// (no clients) so the hub's webhook and the agent apply the same rules.
package work

import (
	"bytes"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/util/jsonpath"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Validate returns what is wrong with a Work's spec. Its cost is linear in the size of the
// spec, which the CRD caps (500 manifests, 500 feedback rules of at most 32 paths).
func Validate(w *musterv1.Work) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateManifests(w.Spec.Manifests, spec.Child("manifests"))
	return append(errs, validateFeedbackRules(w.Spec.FeedbackRules, spec.Child("feedbackRules"))...)
}

// Key is the identity of the object a manifest or rule names: two manifests with the same
// Key would be applied over each other. The version is left out (apps/v1 and apps/v1beta1
// name one object), and an empty namespace is the default one, where the agent applies a
// namespaced object without one; for a cluster-scoped kind both manifests have none, so
// the rule still holds.
type Key struct {
	Group, Kind, Namespace, Name string
}

// KeyOf is the Key of an identity.
func KeyOf(id musterv1.ResourceIdentifier) Key {
	ns := id.Namespace
	if ns == "" {
		ns = "default"
	}
	return Key{Group: id.Group, Kind: id.Kind, Namespace: ns, Name: id.Name}
}

// String reads like kubectl's kind.group plus namespace/name, e.g.
// "apps/Deployment default/web".
func (k Key) String() string {
	kind := k.Kind
	if k.Group != "" {
		kind = k.Group + "/" + k.Kind
	}
	return fmt.Sprintf("%s %s/%s", kind, k.Namespace, k.Name)
}

// header is the part of a manifest that names it; decoding into it skips the rest of the
// object without building it.
type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

func validateManifests(ms []musterv1.Manifest, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	first := make(map[Key]int, len(ms))
	for i, m := range ms {
		p := path.Index(i)
		id, merrs := identify(m.Raw, p)
		if len(merrs) > 0 {
			errs = append(errs, merrs...)
			continue
		}
		k := KeyOf(id)
		if j, dup := first[k]; dup {
			e := field.Duplicate(p, k.String())
			e.Detail = fmt.Sprintf("%s names the same object: one object cannot have two manifests", path.Index(j))
			errs = append(errs, e)
			continue
		}
		first[k] = i
	}
	return errs
}

// identify reads a manifest's identity, or says why it has none.
func identify(raw []byte, p *field.Path) (musterv1.ResourceIdentifier, field.ErrorList) {
	var h header
	if trimmed := bytes.TrimLeft(raw, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '{' {
		return musterv1.ResourceIdentifier{}, field.ErrorList{field.Invalid(p, field.OmitValueType{}, "must be a JSON object")}
	}
	// Keys are matched case-sensitively, as the API server and the agent decode them:
	// encoding/json would read "NAME" as the name and disagree with the agent.
	if err := utiljson.Unmarshal(raw, &h); err != nil {
		return musterv1.ResourceIdentifier{}, field.ErrorList{field.Invalid(p, field.OmitValueType{}, fmt.Sprintf("must be a Kubernetes object: %v", err))}
	}
	var errs field.ErrorList
	gv, err := schema.ParseGroupVersion(h.APIVersion)
	switch {
	case h.APIVersion == "":
		errs = append(errs, field.Required(p.Child("apiVersion"), ""))
	case err != nil:
		errs = append(errs, field.Invalid(p.Child("apiVersion"), h.APIVersion, err.Error()))
	}
	if h.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	}
	if h.Metadata.Name == "" {
		errs = append(errs, field.Required(p.Child("metadata", "name"), ""))
	}
	id := musterv1.ResourceIdentifier{Group: gv.Group, Version: gv.Version, Kind: h.Kind, Namespace: h.Metadata.Namespace, Name: h.Metadata.Name}
	return id, errs
}

func validateFeedbackRules(rules []musterv1.FeedbackRule, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	first := make(map[Key]int, len(rules))
	for i, r := range rules {
		p := path.Index(i)
		k := KeyOf(r.Resource)
		if j, dup := first[k]; dup {
			e := field.Duplicate(p.Child("resource"), k.String())
			e.Detail = fmt.Sprintf("%s has a rule for the same object: only the first would be used", path.Index(j))
			errs = append(errs, e)
		} else {
			first[k] = i
		}
		for j, jp := range r.JSONPaths {
			if _, err := ParseJSONPath(jp.Name, jp.Path); err != nil {
				errs = append(errs, field.Invalid(p.Child("jsonPaths").Index(j).Child("path"), jp.Path, err.Error()))
			}
		}
	}
	return errs
}

// ParseJSONPath parses a feedback path the way the agent evaluates it, with missing keys
// giving no value. The path is written as in the API (.status.succeeded) or as kubectl's
// -o jsonpath takes it ({.status.succeeded}).
func ParseJSONPath(name, path string) (*jsonpath.JSONPath, error) {
	jp := jsonpath.New(name).AllowMissingKeys(true)
	template := path
	if !strings.HasPrefix(strings.TrimSpace(path), "{") {
		template = "{" + path + "}"
	}
	if err := jp.Parse(template); err != nil {
		return nil, fmt.Errorf("not a JSONPath: %w", err)
	}
	return jp, nil
}
