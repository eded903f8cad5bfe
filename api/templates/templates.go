// Package templates builds, from the pod and Job templates a user hands the hub, the
// built-in objects the members will run (a batch/v1 Job, a core/v1 PodTemplate), so that
// the hub's own API server can validate them in a dry-run; and it maps the API server's
// complaints about those objects back to the fields of the user's object. The member API
// servers apply the same rules, so a template the hub admits is one the members accept.
package templates

import (
	"maps"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// ProbeName names the PodTemplate a pod template is checked as. The name is never stored:
// the object only exists in a dry-run.
const ProbeName = "muster-pod-template-check"

// Job is the Job a member gets for t, as the hub writes it into a shard's Work: named
// name, run by the agent, with the template's labels and annotations and the fleet-wide
// parallelism and completions (a shard's share is never larger). uid stands in for the
// FleetJob's, which the shard carries as a label.
func Job(name, namespace string, uid types.UID, t *batchv1.JobTemplateSpec) *batchv1.Job {
	spec := t.Spec.DeepCopy()
	spec.ManagedBy = ptr.To(musterv1.AgentManagedBy)
	labels := maps.Clone(t.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[musterv1.FleetJobUIDLabel] = string(uid)
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: batchv1.SchemeGroupVersion.String(), Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels, Annotations: maps.Clone(t.Annotations)},
		Spec:       *spec,
	}
}

// PodTemplate wraps t, the pods a BroadcastJob runs on every node, so that the API server
// validates it as it validates pods.
func PodTemplate(namespace string, t *corev1.PodTemplateSpec) *corev1.PodTemplate {
	return &corev1.PodTemplate{
		TypeMeta:   metav1.TypeMeta{APIVersion: corev1.SchemeGroupVersion.String(), Kind: "PodTemplate"},
		ObjectMeta: metav1.ObjectMeta{Name: ProbeName, Namespace: namespace},
		Template:   *t.DeepCopy(),
	}
}

// JobField maps a field of the Job that Job built back to the user's object, whose Job
// template is at template: the Job's name is the user object's own (a FleetJob's, or a
// FleetCronJob's from which its children are named); its labels, annotations and spec are
// the template's.
func JobField(jobField string, template *field.Path) string {
	switch {
	case jobField == "metadata.name":
		return "metadata.name"
	case under(jobField, "metadata"), under(jobField, "spec"):
		return template.String() + "." + jobField
	}
	return template.String()
}

// PodTemplateField maps a field of the PodTemplate that PodTemplate built back to the
// user's object, whose pod template is at template. The PodTemplate's own metadata is the
// hub's, so a complaint about it is put on the template as a whole.
func PodTemplateField(podTemplateField string, template *field.Path) string {
	if rest, ok := strings.CutPrefix(podTemplateField, "template"); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
		return template.String() + rest
	}
	return template.String()
}

// under says whether path is root or a field below it.
func under(path, root string) bool {
	rest, ok := strings.CutPrefix(path, root)
	return ok && (rest == "" || rest[0] == '.' || rest[0] == '[')
}

// Errors turns the causes of the API server's Invalid error into field errors on the
// user's object, each at the field mapped by where and with the server's own wording: a
// cause's message is the body of the server's field error ("Invalid value: -1: must be
// greater than or equal to 0"), which is kept as is.
func Errors(causes []metav1.StatusCause, where func(string) string) field.ErrorList {
	errs := make(field.ErrorList, 0, len(causes))
	for _, c := range causes {
		errs = append(errs, fieldError(c, where(c.Field)))
	}
	return errs
}

// fieldError rebuilds a field error whose body is exactly the cause's message: the body
// is the type's name, then ": " and the detail, so the detail is what follows the name.
// A message that does not start with its type's name is kept whole as the detail of an
// Invalid error.
func fieldError(c metav1.StatusCause, path string) *field.Error {
	t := field.ErrorType(c.Type)
	if detail, ok := strings.CutPrefix(c.Message, t.String()); ok && knownType(t) && (detail == "" || strings.HasPrefix(detail, ": ")) {
		return &field.Error{Type: t, Field: path, BadValue: field.OmitValueType{}, Detail: strings.TrimPrefix(detail, ": ")}
	}
	return &field.Error{Type: field.ErrorTypeInvalid, Field: path, BadValue: field.OmitValueType{}, Detail: c.Message}
}

func knownType(t field.ErrorType) bool {
	switch t {
	case field.ErrorTypeNotFound, field.ErrorTypeRequired, field.ErrorTypeDuplicate, field.ErrorTypeInvalid,
		field.ErrorTypeNotSupported, field.ErrorTypeForbidden, field.ErrorTypeTooLong, field.ErrorTypeTooMany,
		field.ErrorTypeInternal, field.ErrorTypeTypeInvalid, field.ErrorTypeTooShort, field.ErrorTypeTooFew:
		return true
	}
	return false
}
