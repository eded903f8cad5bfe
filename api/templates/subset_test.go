package templates

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestSubsetField(t *testing.T) {
	full := &musterv1.WorkloadSpreadSubset{
		Name:                       "zone-a",
		Patch:                      &runtime.RawExtension{Raw: []byte(`{}`)},
		Tolerations:                []corev1.Toleration{{Key: "a"}, {Key: "b"}},
		PreferredNodeSelectorTerms: []corev1.PreferredSchedulingTerm{{Weight: 1}},
		RequiredNodeSelectorTerm:   &corev1.NodeSelectorTerm{},
	}
	bare := &musterv1.WorkloadSpreadSubset{Name: "zone-b"}
	// The patched template has one toleration and two preferred terms of its own.
	s := Subset{Path: field.NewPath("spec", "subsets").Index(2), Spec: full, Tolerations: 1, Preferred: 2}
	tests := []struct {
		name string
		s    Subset
		job  string
		want string
	}{
		{"name", s, "metadata.name", "spec.subsets[2].name"},
		{"the subset's second toleration", s, "spec.template.spec.tolerations[2].operator", "spec.subsets[2].tolerations[1].operator"},
		{"the template's own toleration", s, "spec.template.spec.tolerations[0].operator", "spec.subsets[2].patch"},
		{"tolerations as a whole", s, "spec.template.spec.tolerations", "spec.subsets[2].patch"},
		{"the subset's preferred term", s, "spec.template.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[2].weight",
			"spec.subsets[2].preferredNodeSelectorTerms[0].weight"},
		{"the template's preferred term", s, "spec.template.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[1]", "spec.subsets[2].patch"},
		{"the required term", s, "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]",
			"spec.subsets[2].requiredNodeSelectorTerm"},
		{"a container", s, "spec.template.spec.containers[0].image", "spec.subsets[2].patch"},
		{"the pod labels", s, "spec.template.labels", "spec.subsets[2].patch"},
		{"the FleetJob's parallelism", s, "spec.parallelism", "spec.targetRef"},
		{"no field", s, "", "spec.subsets[2]"},
		{"a toleration without subset tolerations or patch", Subset{Path: field.NewPath("spec", "subsets").Index(0), Spec: bare},
			"spec.template.spec.tolerations[0]", "spec.subsets[0]"},
		{"an index that does not parse", s, "spec.template.spec.tolerations[x]", "spec.subsets[2].patch"},
	}
	for _, tc := range tests {
		if got := tc.s.Field(tc.job); got != tc.want {
			t.Errorf("%s: Field(%q) = %q, want %q", tc.name, tc.job, got, tc.want)
		}
	}
}

func TestOnSubsetAndThroughSubset(t *testing.T) {
	server := field.ErrorList{
		{Type: field.ErrorTypeInvalid, Field: "spec.template.spec.containers[0].resources.requests[cpu]", BadValue: field.OmitValueType{}, Detail: `"-1": must be greater than or equal to 0`},
		{Type: field.ErrorTypeInvalid, Field: "spec.template.labels", BadValue: field.OmitValueType{}, Detail: `"a b": bad`},
		{Type: field.ErrorTypeInvalid, Field: "metadata.name", BadValue: field.OmitValueType{}, Detail: `"x": too long`},
		{Type: field.ErrorTypeRequired, Field: "spec.template.spec.containers"},
	}
	s := Subset{Path: field.NewPath("spec", "subsets").Index(0), Spec: &musterv1.WorkloadSpreadSubset{Name: "a", Patch: &runtime.RawExtension{Raw: []byte(`{}`)}}}
	var got []string
	for _, e := range OnSubset(server, s) {
		got = append(got, e.Error())
	}
	want := []string{
		`spec.subsets[0].patch: Invalid value: "-1": must be greater than or equal to 0 (at spec.containers[0].resources.requests[cpu] of the subset's pod template)`,
		`spec.subsets[0].patch: Invalid value: "a b": bad (at metadata.labels of the subset's pod template)`,
		`spec.subsets[0].name: Invalid value: "x": too long`,
		`spec.subsets[0].patch: Required value: (at spec.containers of the subset's pod template)`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OnSubset (-want +got):\n%s", diff)
	}
	got = nil
	for _, e := range ThroughSubset(server[2:], field.NewPath("spec", "template"), "ws", "a") {
		got = append(got, e.Error())
	}
	want = []string{
		`metadata.name: Invalid value: "x": too long (in the Job of subset a of WorkloadSpread ws)`,
		`spec.template.spec.template.spec.containers: Required value: (in the Job of subset a of WorkloadSpread ws)`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ThroughSubset (-want +got):\n%s", diff)
	}
	if server[0].Field != "spec.template.spec.containers[0].resources.requests[cpu]" || server[2].Detail != `"x": too long` {
		t.Errorf("the server's errors were changed: %v", server)
	}
}

func TestSubsetJob(t *testing.T) {
	tmpl := &batchv1.JobTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "a"}}, Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{}}}
	pods := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"zone": "a"}}}
	job := SubsetJob("train-zone-a", "uid-1", tmpl, "zone-a", pods)
	wantLabels := map[string]string{"team": "a", musterv1.FleetJobUIDLabel: "uid-1", musterv1.SubsetLabel: "zone-a"}
	if job.Name != "train-zone-a" || !cmp.Equal(job.Labels, wantLabels) || job.Spec.Template.Labels["zone"] != "a" {
		t.Errorf("SubsetJob = %+v", job)
	}
	if len(tmpl.Labels) != 1 || tmpl.Spec.Template.Labels != nil {
		t.Errorf("SubsetJob changed the FleetJob's template: %+v", tmpl)
	}
}
