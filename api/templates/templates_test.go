package templates

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestJobField(t *testing.T) {
	fleetJob := field.NewPath("spec", "template")
	cron := field.NewPath("spec", "jobTemplate", "spec", "template")
	tests := []struct {
		job      string
		template *field.Path
		want     string
	}{
		{"spec.template.spec.containers[0].name", fleetJob, "spec.template.spec.template.spec.containers[0].name"},
		{"spec.parallelism", fleetJob, "spec.template.spec.parallelism"},
		{"spec", fleetJob, "spec.template.spec"},
		{"metadata.name", fleetJob, "metadata.name"},
		{"metadata.labels", fleetJob, "spec.template.metadata.labels"},
		{"metadata.annotations[a/b]", fleetJob, "spec.template.metadata.annotations[a/b]"},
		{"spec.completions", cron, "spec.jobTemplate.spec.template.spec.completions"},
		{"metadata.name", cron, "metadata.name"},
		{"", fleetJob, "spec.template"},
		{"specification", fleetJob, "spec.template"},
	}
	for _, tc := range tests {
		if got := JobField(tc.job, tc.template); got != tc.want {
			t.Errorf("JobField(%q, %s) = %q, want %q", tc.job, tc.template, got, tc.want)
		}
	}
}

func TestPodTemplateField(t *testing.T) {
	bcj := field.NewPath("spec", "template")
	cron := field.NewPath("spec", "broadcastJobTemplate", "spec", "template")
	tests := []struct {
		pt       string
		template *field.Path
		want     string
	}{
		{"template.spec.containers[0].name", bcj, "spec.template.spec.containers[0].name"},
		{"template.metadata.labels", bcj, "spec.template.metadata.labels"},
		{"template", bcj, "spec.template"},
		{"template.spec.containers", cron, "spec.broadcastJobTemplate.spec.template.spec.containers"},
		{"metadata.name", bcj, "spec.template"},
		{"templates", bcj, "spec.template"},
	}
	for _, tc := range tests {
		if got := PodTemplateField(tc.pt, tc.template); got != tc.want {
			t.Errorf("PodTemplateField(%q, %s) = %q, want %q", tc.pt, tc.template, got, tc.want)
		}
	}
}

// TestErrorsKeepTheServersWording: a cause made by the API server from a field error
// comes back, on the user's field, with the same body.
func TestErrorsKeepTheServersWording(t *testing.T) {
	server := field.ErrorList{
		field.Invalid(field.NewPath("spec", "parallelism"), int32(-1), "must be greater than or equal to 0"),
		field.Required(field.NewPath("spec", "template", "spec", "containers"), ""),
		field.Required(field.NewPath("spec", "completions"), "when completion mode is Indexed"),
		field.NotSupported(field.NewPath("spec", "template", "spec", "restartPolicy"), "Always", []string{"OnFailure", "Never"}),
		field.Invalid(field.NewPath("metadata", "name"), "x", "will not able to create pod with invalid DNS label: x-9"),
		field.Forbidden(field.NewPath("spec", "podFailurePolicy"), "only allowed with Never"),
		field.TooLong(field.NewPath("metadata", "labels"), "", 63),
		field.Duplicate(field.NewPath("spec", "template", "spec", "containers").Index(1).Child("name"), "a"),
	}
	causes := apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, "x", server).ErrStatus.Details.Causes
	got := Errors(causes, func(f string) string { return JobField(f, field.NewPath("spec", "template")) })
	if len(got) != len(server) {
		t.Fatalf("got %d errors, want %d", len(got), len(server))
	}
	for i := range server {
		if got[i].Type != server[i].Type {
			t.Errorf("error %d type = %s, want %s", i, got[i].Type, server[i].Type)
		}
		if got[i].ErrorBody() != server[i].ErrorBody() {
			t.Errorf("error %d body = %q, want the server's %q", i, got[i].ErrorBody(), server[i].ErrorBody())
		}
		if want := JobField(server[i].Field, field.NewPath("spec", "template")); got[i].Field != want {
			t.Errorf("error %d field = %q, want %q", i, got[i].Field, want)
		}
	}
}

func TestErrorsKeepsAnUnexpectedMessageWhole(t *testing.T) {
	causes := []metav1.StatusCause{{Type: "FieldValueInvalid", Field: "spec.x", Message: "something else"}, {Type: "Odd", Message: "odd: thing"}}
	got := Errors(causes, func(f string) string { return "spec.template." + f })
	want := []string{"spec.template.spec.x: Invalid value: something else", "spec.template.: Invalid value: odd: thing"}
	for i := range want {
		if got[i].Error() != want[i] {
			t.Errorf("error %d = %q, want %q", i, got[i].Error(), want[i])
		}
	}
}

func TestJobIsTheShardJob(t *testing.T) {
	tmpl := &batchv1.JobTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Name: "ignored", Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"note": "n"}},
		Spec:       batchv1.JobSpec{Parallelism: ptr.To[int32](4), Completions: ptr.To[int32](10)},
	}
	got := Job("train", "muster-system", "uid-1", tmpl)
	want := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "muster-system",
			Labels: map[string]string{"team": "a", musterv1.FleetJobUIDLabel: "uid-1"}, Annotations: map[string]string{"note": "n"}},
		Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](4), Completions: ptr.To[int32](10), ManagedBy: ptr.To(musterv1.AgentManagedBy)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Job (-want +got):\n%s", diff)
	}
	if tmpl.Spec.ManagedBy != nil || len(tmpl.Labels) != 1 {
		t.Errorf("Job changed the user's template: %+v", tmpl)
	}
}

func TestPodTemplate(t *testing.T) {
	tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}}
	got := PodTemplate("muster-system", tmpl)
	if got.Name != ProbeName || got.Namespace != "muster-system" || got.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("PodTemplate = %+v", got)
	}
}
