package work

import (
	"slices"
	"testing"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// TestKeyOf: which identities name one object in the member, so that Validate refuses a
// second manifest or feedback rule for it; and how the object reads in the message.
func TestKeyOf(t *testing.T) {
	cases := []struct {
		name string
		a, b musterv1.ResourceIdentifier
		same bool
		// str is a's key as Validate's messages show it.
		str string
	}{
		{"versions of one kind", musterv1.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "web", Name: "x"},
			musterv1.ResourceIdentifier{Group: "apps", Version: "v1beta2", Kind: "Deployment", Namespace: "web", Name: "x"}, true, "apps/Deployment web/x"},
		{"no namespace is the default one", musterv1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Name: "x"},
			musterv1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "default", Name: "x"}, true, "ConfigMap default/x"},
		{"another group", musterv1.ResourceIdentifier{Group: "apps", Kind: "Deployment", Namespace: "web", Name: "x"},
			musterv1.ResourceIdentifier{Group: "extensions", Kind: "Deployment", Namespace: "web", Name: "x"}, false, "apps/Deployment web/x"},
		{"another kind", musterv1.ResourceIdentifier{Kind: "ConfigMap", Namespace: "web", Name: "x"},
			musterv1.ResourceIdentifier{Kind: "Secret", Namespace: "web", Name: "x"}, false, "ConfigMap web/x"},
		{"another namespace", musterv1.ResourceIdentifier{Kind: "ConfigMap", Namespace: "web", Name: "x"},
			musterv1.ResourceIdentifier{Kind: "ConfigMap", Namespace: "db", Name: "x"}, false, "ConfigMap web/x"},
		{"names differ in case", musterv1.ResourceIdentifier{Kind: "ConfigMap", Namespace: "web", Name: "x"},
			musterv1.ResourceIdentifier{Kind: "ConfigMap", Namespace: "web", Name: "X"}, false, "ConfigMap web/x"},
		{"a cluster-scoped kind", musterv1.ResourceIdentifier{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "reader"},
			musterv1.ResourceIdentifier{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "reader"}, true,
			"rbac.authorization.k8s.io/ClusterRole default/reader"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := KeyOf(tc.a) == KeyOf(tc.b); got != tc.same {
				t.Errorf("KeyOf(%+v) == KeyOf(%+v) is %v, want %v", tc.a, tc.b, got, tc.same)
			}
			if got := KeyOf(tc.a).String(); got != tc.str {
				t.Errorf("KeyOf(%+v).String() = %q, want %q", tc.a, got, tc.str)
			}
		})
	}
}

// TestValidateMixesManifestsAndRules: a Work's manifest errors and rule errors are all
// reported, in spec order, and a manifest and a rule for one object are no conflict.
func TestValidateMixesManifestsAndRules(t *testing.T) {
	w := &musterv1.Work{Spec: musterv1.WorkSpec{
		Manifests: []musterv1.Manifest{cm("web", "a", "1"), manifest(` {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":"web"}}`), cm("web", "a", "2")},
		FeedbackRules: []musterv1.FeedbackRule{
			{Resource: musterv1.ResourceIdentifier{Kind: "ConfigMap", Namespace: "web", Name: "a"}, Mode: musterv1.FeedbackStatus},
			jsonPaths("ConfigMap", "b", ".data.k", ".data[", ".metadata.name"),
		},
	}}
	var got []string
	for _, e := range Validate(w) {
		got = append(got, e.Field)
	}
	want := []string{"spec.manifests[2]", "spec.feedbackRules[1].jsonPaths[1].path"}
	if !slices.Equal(got, want) {
		t.Errorf("Validate() errors at %v, want %v", got, want)
	}
}
