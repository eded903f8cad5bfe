package job

import (
	"fmt"
	"math"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/musterhq/muster/api/indexset"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// newPod builds a pod of job from its template, with the tracking finalizer. For Indexed
// jobs index is the completion index, published as the built-in controller does: the
// annotation and label, JOB_COMPLETION_INDEX, the hostname <job>-<index>, and the index's
// failure counts for backoffLimitPerIndex.
func newPod(job *batchv1.Job, index int, retry indexRetry) *corev1.Pod {
	tmpl := job.Spec.Template.DeepCopy()
	labels := tmpl.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	labels[musterv1.ControllerLabel] = "job"
	annotations := tmpl.Annotations
	if annotations == nil {
		annotations = map[string]string{}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    job.Name + "-",
			Namespace:       job.Namespace,
			Labels:          labels,
			Annotations:     annotations,
			Finalizers:      []string{trackingFinalizer},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
		},
		Spec: tmpl.Spec,
	}
	if index == noIndex {
		return pod
	}
	annotations[indexAnnotation] = strconv.Itoa(index)
	// A shard of a divided FleetJob runs a slice of the fleet's indexes: the pod keeps its
	// local index for the Job's bookkeeping and shows the fleet-wide one to the workload
	// and to people, in its name and hostname as in its environment.
	visible, ofFleet := fleetIndex(job, index)
	if ofFleet {
		annotations[musterv1.GlobalIndexAnnotation] = strconv.Itoa(visible)
	}
	pod.GenerateName = fmt.Sprintf("%s-%d-", job.Name, visible)
	labels[batchv1.JobCompletionIndexAnnotation] = strconv.Itoa(index)
	if job.Spec.BackoffLimitPerIndex != nil {
		// Every pod of such a job says how often its index failed, "0" on the first try,
		// so that tools reading it need not tell a missing count from a first attempt.
		annotations[indexFailureAnnotation] = strconv.Itoa(int(retry.failures))
	}
	if retry.ignored > 0 {
		annotations[indexIgnoredAnnotation] = strconv.Itoa(int(retry.ignored))
	}
	if pod.Spec.Hostname == "" {
		pod.Spec.Hostname = fmt.Sprintf("%s-%d", job.Name, visible)
	}
	env := corev1.EnvVar{Name: indexEnv, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
		FieldPath: fmt.Sprintf("metadata.annotations['%s']", indexAnnotation),
	}}}
	if visible != index {
		env = corev1.EnvVar{Name: indexEnv, Value: strconv.Itoa(visible)}
	}
	for i := range pod.Spec.InitContainers {
		pod.Spec.InitContainers[i].Env = withIndexEnv(pod.Spec.InitContainers[i].Env, env)
	}
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].Env = withIndexEnv(pod.Spec.Containers[i].Env, env)
	}
	return pod
}

// withIndexEnv adds the index variable unless the container defines it already: the
// template's own definition wins, and a variable twice in a container is an error to
// most tools.
func withIndexEnv(vars []corev1.EnvVar, env corev1.EnvVar) []corev1.EnvVar {
	for _, v := range vars {
		if v.Name == env.Name {
			return vars
		}
	}
	return append(vars, env)
}

// fleetIndex is the fleet-wide completion index that local index runs in a shard of a
// divided FleetJob, and whether the Job is one: offset+index for a shard of a contiguous
// range, the index-th of the indexes it runs for a shard that took over the unfinished
// part of an evicted one. Any other Job runs index itself.
func fleetIndex(job *batchv1.Job, index int) (int, bool) {
	if set, ok := job.Annotations[musterv1.CompletionIndexesAnnotation]; ok {
		if n, ok := indexset.Parse(set, math.MaxInt32).Nth(index); ok {
			return n, true
		}
		return index, false
	}
	offset, ok := job.Annotations[musterv1.IndexOffsetAnnotation]
	if n, err := strconv.Atoi(offset); ok && err == nil && n >= 0 {
		return index + n, true
	}
	return index, false
}
