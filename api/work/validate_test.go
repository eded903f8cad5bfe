package work

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func manifest(s string) musterv1.Manifest {
	return musterv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(s)}}
}

func cm(ns, name, value string) musterv1.Manifest {
	meta := `"name":"` + name + `"`
	if ns != "" {
		meta += `,"namespace":"` + ns + `"`
	}
	return manifest(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{` + meta + `},"data":{"k":"` + value + `"}}`)
}

func deploy(version, name string) musterv1.Manifest {
	return manifest(`{"apiVersion":"apps/` + version + `","kind":"Deployment","metadata":{"name":"` + name + `","namespace":"web"}}`)
}

func jsonPaths(kind, name string, paths ...string) musterv1.FeedbackRule {
	r := musterv1.FeedbackRule{Resource: musterv1.ResourceIdentifier{Kind: kind, Namespace: "default", Name: name}, Mode: musterv1.FeedbackJSONPaths}
	for _, p := range paths {
		r.JSONPaths = append(r.JSONPaths, musterv1.JSONPathRule{Name: "v" + p, Path: p})
	}
	return r
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name      string
		manifests []musterv1.Manifest
		rules     []musterv1.FeedbackRule
		want      []string // each error, as the API server would print it
	}{
		{name: "empty"},
		{name: "distinct objects", manifests: []musterv1.Manifest{cm("default", "a", "1"), cm("default", "b", "1"), cm("other", "a", "1"), deploy("v1", "a")}},
		{
			name:      "two manifests for one object",
			manifests: []musterv1.Manifest{deploy("v1", "api"), cm("default", "a", "1"), deploy("v1", "api")},
			want:      []string{`spec.manifests[2]: Duplicate value: "apps/Deployment web/api": spec.manifests[0] names the same object: one object cannot have two manifests`},
		},
		{
			// The agent decodes keys case-sensitively: "NAME" is no name, and the manifest
			// is the same object as the first, not another one.
			name:      "keys are case-sensitive",
			manifests: []musterv1.Manifest{cm("default", "x", "1"), manifest(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default","NAME":"y"}}`)},
			want:      []string{`spec.manifests[1]: Duplicate value: "ConfigMap default/x": spec.manifests[0] names the same object: one object cannot have two manifests`},
		},
		{
			name:      "the version does not make another object",
			manifests: []musterv1.Manifest{deploy("v1", "api"), deploy("v1beta1", "api")},
			want:      []string{`spec.manifests[1]: Duplicate value: "apps/Deployment web/api": spec.manifests[0] names the same object: one object cannot have two manifests`},
		},
		{
			name:      "no namespace is the default one",
			manifests: []musterv1.Manifest{cm("", "a", "1"), cm("default", "a", "2")},
			want:      []string{`spec.manifests[1]: Duplicate value: "ConfigMap default/a": spec.manifests[0] names the same object: one object cannot have two manifests`},
		},
		{
			name:      "each later duplicate names the first",
			manifests: []musterv1.Manifest{cm("x", "a", "1"), cm("x", "a", "2"), cm("x", "a", "3")},
			want: []string{
				`spec.manifests[1]: Duplicate value: "ConfigMap x/a": spec.manifests[0] names the same object: one object cannot have two manifests`,
				`spec.manifests[2]: Duplicate value: "ConfigMap x/a": spec.manifests[0] names the same object: one object cannot have two manifests`,
			},
		},
		{
			name: "manifests that are not objects or lack an identity",
			manifests: []musterv1.Manifest{
				manifest(`[1,2]`), manifest(`"text"`), manifest(`null`), manifest(``), manifest(` {"kind":7}`),
				manifest(`{"metadata":{}}`), manifest(`{"apiVersion":"a/b/c","kind":"X","metadata":{"name":"n"}}`),
			},
			want: []string{
				`spec.manifests[0]: Invalid value: must be a JSON object`,
				`spec.manifests[1]: Invalid value: must be a JSON object`,
				`spec.manifests[2]: Invalid value: must be a JSON object`,
				`spec.manifests[3]: Invalid value: must be a JSON object`,
				`spec.manifests[4]: Invalid value: must be a Kubernetes object: json: cannot unmarshal number into Go struct field header.kind of type string`,
				`spec.manifests[5].apiVersion: Required value`,
				`spec.manifests[5].kind: Required value`,
				`spec.manifests[5].metadata.name: Required value`,
				`spec.manifests[6].apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c`,
			},
		},
		{
			name:  "valid feedback paths",
			rules: []musterv1.FeedbackRule{jsonPaths("ConfigMap", "a", ".data.k", ".status.conditions[?(@.type==\"Ready\")].status", ".spec.replicas")},
		},
		{
			name:  "a path that does not parse",
			rules: []musterv1.FeedbackRule{jsonPaths("ConfigMap", "a", ".data.k"), jsonPaths("ConfigMap", "b", ".status", "{.data[}")},
			want:  []string{`spec.feedbackRules[1].jsonPaths[1].path: Invalid value: "{.data[}": not a JSONPath: `},
		},
		{
			name:  "two rules for one object",
			rules: []musterv1.FeedbackRule{jsonPaths("ConfigMap", "a", ".data"), {Resource: musterv1.ResourceIdentifier{Kind: "ConfigMap", Name: "a"}, Mode: musterv1.FeedbackNone}},
			want:  []string{`spec.feedbackRules[1].resource: Duplicate value: "ConfigMap default/a": spec.feedbackRules[0] has a rule for the same object: only the first would be used`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := &musterv1.Work{Spec: musterv1.WorkSpec{Manifests: tc.manifests, FeedbackRules: tc.rules}}
			var got []string
			for _, e := range Validate(w) {
				got = append(got, e.Error())
			}
			// A parser's own words may change between versions: compare the prefix we write.
			for i := range got {
				if i < len(tc.want) && strings.HasSuffix(tc.want[i], ": ") && strings.HasPrefix(got[i], tc.want[i]) {
					got[i] = tc.want[i]
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseJSONPathRefusesWhatTheAgentCannotEvaluate(t *testing.T) {
	for path, ok := range map[string]bool{
		".status.succeeded":     true,
		".metadata.labels.app":  true,
		".items[0].name":        true,
		"{.status.succeeded}":   true,
		"{.data[}":              false,
		".data[":                false,
		".status.conditions[?(": false,
	} {
		if _, err := ParseJSONPath("v", path); (err == nil) != ok {
			t.Errorf("ParseJSONPath(%q) error = %v, want ok=%v", path, err, ok)
		}
	}
}
