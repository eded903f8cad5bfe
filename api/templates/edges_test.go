package templates

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// TestJobOverridesWhatMusterOwns: the shard Job always runs under the agent and carries
// the FleetJob's uid, whatever the template says; a template without labels or
// annotations gets the uid label and nothing else.
func TestJobOverridesWhatMusterOwns(t *testing.T) {
	preset := &batchv1.JobTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{musterv1.FleetJobUIDLabel: "forged", "app": "a"}},
		Spec:       batchv1.JobSpec{ManagedBy: ptr.To("kueue.x-k8s.io/multikueue")},
	}
	got := Job("train", "", "uid-1", preset)
	if got.Labels[musterv1.FleetJobUIDLabel] != "uid-1" || got.Labels["app"] != "a" || *got.Spec.ManagedBy != musterv1.AgentManagedBy {
		t.Errorf("Job(preset) labels %v, managedBy %s; want the FleetJob's uid and the agent", got.Labels, *got.Spec.ManagedBy)
	}
	if preset.Labels[musterv1.FleetJobUIDLabel] != "forged" || *preset.Spec.ManagedBy != "kueue.x-k8s.io/multikueue" {
		t.Errorf("Job changed the template: %+v", preset)
	}
	bare := Job("train", "ns", "uid-2", &batchv1.JobTemplateSpec{})
	if !cmp.Equal(bare.Labels, map[string]string{musterv1.FleetJobUIDLabel: "uid-2"}) || bare.Annotations != nil {
		t.Errorf("Job(bare template) labels %v, annotations %v; want only the uid label", bare.Labels, bare.Annotations)
	}
}

// TestSubsetFieldEdges: fields that only look like the subset's lists are not put on
// them.
func TestSubsetFieldEdges(t *testing.T) {
	path := field.NewPath("spec", "subsets").Index(1)
	patched := &musterv1.WorkloadSpreadSubset{Name: "a", Patch: &runtime.RawExtension{Raw: []byte(`{}`)},
		Tolerations: []corev1.Toleration{{Key: "spot"}}}
	unpatched := &musterv1.WorkloadSpreadSubset{Name: "b", Tolerations: []corev1.Toleration{{Key: "spot"}}}
	tests := []struct {
		name string
		s    Subset
		job  string
		want string
	}{
		{"an index without its bracket closed", Subset{Path: path, Spec: patched}, "spec.template.spec.tolerations[0", "spec.subsets[1].patch"},
		{"a toleration of the template, no patch", Subset{Path: path, Spec: unpatched, Tolerations: 2}, "spec.template.spec.tolerations[1].key", "spec.subsets[1]"},
		{"the first appended toleration", Subset{Path: path, Spec: unpatched, Tolerations: 2}, "spec.template.spec.tolerations[2].key", "spec.subsets[1].tolerations[0].key"},
		{"a field named like the tolerations", Subset{Path: path, Spec: patched}, "spec.template.spec.tolerationsExtra", "spec.subsets[1].patch"},
		{"a preferred term when the subset has none", Subset{Path: path, Spec: patched},
			"spec.template.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]", "spec.subsets[1].patch"},
		{"a required term when the subset has none", Subset{Path: path, Spec: patched},
			"spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution", "spec.subsets[1].patch"},
		{"a Job field named like the pod template", Subset{Path: path, Spec: patched}, "spec.templateGeneration", "spec.targetRef"},
		{"the pod template as a whole", Subset{Path: path, Spec: patched}, "spec.template", "spec.subsets[1].patch"},
	}
	for _, tc := range tests {
		if got := tc.s.Field(tc.job); got != tc.want {
			t.Errorf("%s: Field(%q) = %q, want %q", tc.name, tc.job, got, tc.want)
		}
	}
}

// TestOnSubsetNotes: a complaint about the pod's annotations names them where the patch
// writes them; one outside the pod template keeps its message as the server wrote it.
func TestOnSubsetNotes(t *testing.T) {
	s := Subset{Path: field.NewPath("spec", "subsets").Index(0), Spec: &musterv1.WorkloadSpreadSubset{Name: "a"}}
	server := field.ErrorList{
		field.Invalid(field.NewPath("spec", "template", "annotations").Key("a b"), "x", "bad key"),
		field.Invalid(field.NewPath("spec", "parallelism"), int32(-1), "must be greater than or equal to 0"),
	}
	var got []string
	for _, e := range OnSubset(server, s) {
		got = append(got, e.Error())
	}
	want := []string{
		`spec.subsets[0]: Invalid value: "x": bad key (at metadata.annotations[a b] of the subset's pod template)`,
		`spec.targetRef: Invalid value: -1: must be greater than or equal to 0`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OnSubset (-want +got):\n%s", diff)
	}
	if got := Errors(nil, func(string) string { return "x" }); len(got) != 0 {
		t.Errorf("Errors(no causes) = %v", got)
	}
}
