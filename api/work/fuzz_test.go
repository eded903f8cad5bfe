package work

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// FuzzValidate: any manifest bytes and feedback path are judged without panic, and a
// Work whose two manifests are the same object is always refused.
func FuzzValidate(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`), "{.data[}")
	f.Add([]byte(`"a string"`), ".status.x")
	f.Add([]byte(`{"apiVersion":"apps/v1/x","kind":"","metadata":{}}`), "{range .items[*]}{.name}{end}")
	f.Add([]byte(`{`), "{{{{")
	f.Fuzz(func(t *testing.T, manifest []byte, path string) {
		w := &musterv1.Work{Spec: musterv1.WorkSpec{
			Manifests: []musterv1.Manifest{{RawExtension: runtime.RawExtension{Raw: manifest}}, {RawExtension: runtime.RawExtension{Raw: manifest}}},
			FeedbackRules: []musterv1.FeedbackRule{{
				Resource:  musterv1.ResourceIdentifier{Kind: "ConfigMap", Name: "x"},
				Mode:      musterv1.FeedbackJSONPaths,
				JSONPaths: []musterv1.JSONPathRule{{Name: "p", Path: path}},
			}},
		}}
		if errs := Validate(w); len(errs) == 0 {
			t.Fatalf("a Work with the manifest %q twice is admitted", manifest)
		}
	})
}
