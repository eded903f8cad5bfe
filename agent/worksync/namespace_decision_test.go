package worksync

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestReleaseNamespace(t *testing.T) {
	cases := []struct {
		name  string
		facts namespaceFacts
		want  bool
	}{
		{"created by the agent and unused", namespaceFacts{CreatedByAgent: true}, true},
		{"existed before the Work", namespaceFacts{}, false},
		{"existed before, even unused and unneeded", namespaceFacts{CreatedByAgent: false, NeededBy: nil, UserObject: ""}, false},
		{"already terminating", namespaceFacts{CreatedByAgent: true, Terminating: true}, false},
		{"another Work has a manifest in it", namespaceFacts{CreatedByAgent: true, NeededBy: []string{"other"}}, false},
		{"the user put something in it", namespaceFacts{CreatedByAgent: true, UserObject: "ConfigMap mine"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, why := releaseNamespace(tc.facts)
			if got != tc.want || why == "" {
				t.Errorf("releaseNamespace(%+v) = %v, %q; want %v with a reason", tc.facts, got, why, tc.want)
			}
		})
	}
}

func TestIsUserObject(t *testing.T) {
	now := metav1.NewTime(time.Now())
	live := func(name string) bool { return name == "live" }
	obj := func(name string, mutate func(*metav1.ObjectMeta)) *metav1.ObjectMeta {
		m := &metav1.ObjectMeta{Name: name}
		if mutate != nil {
			mutate(m)
		}
		return m
	}
	cases := []struct {
		name     string
		resource string
		obj      *metav1.ObjectMeta
		want     bool
	}{
		{"an unlabelled ConfigMap", "configmaps", obj("mine", nil), true},
		{"applied by a live Work", "configmaps", obj("cm", func(m *metav1.ObjectMeta) { m.Labels = map[string]string{WorkLabel: "live"} }), false},
		{"orphaned by a Work that is gone", "configmaps", obj("cm", func(m *metav1.ObjectMeta) { m.Labels = map[string]string{WorkLabel: "gone"} }), true},
		{"pod of a Job", "pods", obj("job-0", func(m *metav1.ObjectMeta) { m.OwnerReferences = []metav1.OwnerReference{{Kind: "Job", Name: "job"}} }), false},
		{"being deleted", "configmaps", obj("mine", func(m *metav1.ObjectMeta) { m.DeletionTimestamp = &now }), false},
		{"the root CA every namespace gets", "configmaps", obj("kube-root-ca.crt", nil), false},
		{"the default service account", "serviceaccounts", obj("default", nil), false},
		{"a service account of the user", "serviceaccounts", obj("builder", nil), true},
		{"a ConfigMap the user named default", "configmaps", obj("default", nil), true},
		{"an event", "events", obj("job.1", nil), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := isUserObject(tc.resource, tc.obj, live); got != tc.want {
				t.Errorf("isUserObject(%s, %+v) = %v, want %v", tc.resource, tc.obj, got, tc.want)
			}
		})
	}
}
