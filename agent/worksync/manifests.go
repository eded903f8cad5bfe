package worksync

import (
	"encoding/json"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	workapi "github.com/musterhq/muster/api/work"
)

// Labels and names the agent puts on what it applies.
const (
	// FieldManager owns every field the agent applies.
	FieldManager = "muster-agent"
	// WorkLabel on a member object names the Work it came from (see workapi.Label).
	WorkLabel = workapi.Label
	// Finalizer holds a Work until its member objects are deleted.
	Finalizer = musterv1.WorkCleanupFinalizer
)

// manifest is one decoded manifest of a Work.
type manifest struct {
	ordinal int
	object  *unstructured.Unstructured
	// err says why the manifest could not be decoded; object is nil then.
	err error
}

// decodeManifests decodes every manifest, keeping ones that fail with their error.
func decodeManifests(work *musterv1.Work) []manifest {
	out := make([]manifest, 0, len(work.Spec.Manifests))
	for i, m := range work.Spec.Manifests {
		u := &unstructured.Unstructured{}
		err := json.Unmarshal(m.Raw, &u.Object)
		switch {
		case err != nil:
			err = fmt.Errorf("manifest %d is not a JSON object: %w", i, err)
		case u.GetAPIVersion() == "" || u.GetKind() == "":
			err = fmt.Errorf("manifest %d has no apiVersion or kind", i)
		case u.GetName() == "":
			err = fmt.Errorf("manifest %d (%s) has no metadata.name", i, u.GetKind())
		}
		if err != nil {
			out = append(out, manifest{ordinal: i, err: err})
			continue
		}
		out = append(out, manifest{ordinal: i, object: u})
	}
	return out
}

// applyOrder puts namespaces and CRDs first, so that objects that live in them or are of
// their kind apply in the same pass; otherwise the Work's order is kept.
func applyOrder(ms []manifest) []manifest {
	sorted := append([]manifest(nil), ms...)
	rank := func(m manifest) int {
		if m.object == nil {
			return 2
		}
		switch m.object.GroupVersionKind().GroupKind() {
		case schema.GroupKind{Kind: "Namespace"}:
			return 0
		case schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:
			return 1
		}
		return 2
	}
	sort.SliceStable(sorted, func(i, j int) bool { return rank(sorted[i]) < rank(sorted[j]) })
	return sorted
}

// duplicates maps the ordinal of each manifest that names the same object as an earlier
// one to the ordinal of that first manifest. Applying both would make them overwrite each
// other on every pass, each change waking the agent again: only the first is applied.
func duplicates(ms []manifest) map[int]int {
	first := make(map[workapi.Key]int, len(ms))
	out := map[int]int{}
	for _, m := range ms {
		if m.object == nil {
			continue
		}
		k := workapi.KeyOf(identity(m.object))
		if j, ok := first[k]; ok {
			out[m.ordinal] = j
			continue
		}
		first[k] = m.ordinal
	}
	return out
}

// identity names an object for status and for deletion.
func identity(u *unstructured.Unstructured) musterv1.ResourceIdentifier {
	gvk := u.GroupVersionKind()
	return musterv1.ResourceIdentifier{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

// objectFor is an empty object of an identity, for gets and deletes.
func objectFor(id musterv1.ResourceIdentifier) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: id.Group, Version: id.Version, Kind: id.Kind})
	u.SetNamespace(id.Namespace)
	u.SetName(id.Name)
	return u
}
