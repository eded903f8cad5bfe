package templates

import (
	"fmt"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Where the Job of a subset's shard keeps what a WorkloadSpread subset adds to the pods.
const (
	podTemplateField = "spec.template"
	tolerationsField = "spec.template.spec.tolerations"
	requiredField    = "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
	preferredField   = "spec.template.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
)

// SubsetJob is the Job a member gets for a shard of a WorkloadSpread subset: the Job of
// t (see Job) named name, labelled with the subset and running pods, the FleetJob's pod
// template as the subset shapes it.
func SubsetJob(name string, uid types.UID, t *batchv1.JobTemplateSpec, subset string, pods *corev1.PodTemplateSpec) *batchv1.Job {
	job := Job(name, "", uid, t)
	job.Labels[musterv1.SubsetLabel] = subset
	job.Spec.Template = *pods.DeepCopy()
	return job
}

// Subset is a WorkloadSpread subset, as the Jobs of its shards show it: the subset at path
// in its WorkloadSpread, and how many tolerations and preferred node terms the pod
// template has before the subset appends its own (the FleetJob's, with the patch).
type Subset struct {
	Path        *field.Path
	Spec        *musterv1.WorkloadSpreadSubset
	Tolerations int
	Preferred   int
}

// Field maps a field of the subset's Job to the subset's field that put it there: the
// Job's name comes from the subset's name, the appended tolerations and preferred terms
// and the required term from the subset's own, and the rest of the pod template from its
// patch. Job fields outside the pod template are the FleetJob's, named by targetRef.
func (s Subset) Field(jobField string) string {
	switch {
	case jobField == "":
		return s.Path.String()
	case jobField == "metadata.name":
		return s.Path.Child("name").String()
	case len(s.Spec.Tolerations) > 0 && under(jobField, tolerationsField):
		if rest, ok := appended(jobField, tolerationsField, s.Tolerations); ok {
			return s.Path.Child("tolerations").String() + rest
		}
	case len(s.Spec.PreferredNodeSelectorTerms) > 0 && under(jobField, preferredField):
		if rest, ok := appended(jobField, preferredField, s.Preferred); ok {
			return s.Path.Child("preferredNodeSelectorTerms").String() + rest
		}
	case s.Spec.RequiredNodeSelectorTerm != nil && under(jobField, requiredField):
		return s.Path.Child("requiredNodeSelectorTerm").String()
	case !under(jobField, podTemplateField):
		return field.NewPath("spec", "targetRef").String()
	}
	if s.Spec.Patch == nil {
		return s.Path.String()
	}
	return s.Path.Child("patch").String()
}

// appended reads the index in jobField, a field of list or below it: when the entry is
// one of those appended after the first skip, it returns the path after list with the
// index shifted to the appended entries' own.
func appended(jobField, list string, skip int) (string, bool) {
	rest := strings.TrimPrefix(jobField, list)
	if !strings.HasPrefix(rest, "[") {
		return "", false
	}
	end := strings.IndexByte(rest, ']')
	i, err := strconv.Atoi(rest[1:max(end, 1)])
	if end < 0 || err != nil || i < skip {
		return "", false
	}
	return fmt.Sprintf("[%d]%s", i-skip, rest[end+1:]), true
}

// OnSubset puts errs, the API server's complaints about the Job of a subset's shard, on
// the subset's fields (see Subset.Field). A complaint about the pod template keeps the
// server's message and says where in the subset's pod template it is, since the patch
// that put the value there may be anywhere in the patch.
func OnSubset(errs field.ErrorList, s Subset) field.ErrorList {
	out := make(field.ErrorList, 0, len(errs))
	for _, e := range errs {
		moved := *e
		moved.Field = s.Field(e.Field)
		if pod, ok := strings.CutPrefix(e.Field, podTemplateField+"."); ok {
			moved.Detail = withNote(e.Detail, "at "+templateField(pod)+" of the subset's pod template")
		}
		out = append(out, &moved)
	}
	return out
}

// ThroughSubset puts errs, the API server's complaints about the Job of a subset's shard,
// on the FleetJob's fields (see JobField, with the FleetJob's Job template at template),
// each saying which subset's Job it was: the value may be the subset's, not the
// FleetJob's.
func ThroughSubset(errs field.ErrorList, template *field.Path, spread, subset string) field.ErrorList {
	out := make(field.ErrorList, 0, len(errs))
	for _, e := range errs {
		moved := *e
		moved.Field = JobField(e.Field, template)
		moved.Detail = withNote(e.Detail, fmt.Sprintf("in the Job of subset %s of WorkloadSpread %s", subset, spread))
		out = append(out, &moved)
	}
	return out
}

// templateField names a field of a pod template as the patch writes it: the API server
// reports a template's labels and annotations without their "metadata".
func templateField(f string) string {
	if under(f, "labels") || under(f, "annotations") {
		return "metadata." + f
	}
	return f
}

// withNote adds a note in parentheses to a field error's detail.
func withNote(detail, note string) string {
	if detail == "" {
		return "(" + note + ")"
	}
	return detail + " (" + note + ")"
}
