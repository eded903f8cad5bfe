package job

import (
	"slices"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// Well-known names of the batch API that the agent's Job controller reads and writes the
// way kube-controller-manager does, so that tools and users see the same pods.
const (
	trackingFinalizer      = batchv1.JobTrackingFinalizer
	indexAnnotation        = batchv1.JobCompletionIndexAnnotation
	indexFailureAnnotation = batchv1.JobIndexFailureCountAnnotation
	indexIgnoredAnnotation = batchv1.JobIndexIgnoredFailureCountAnnotation
	indexEnv               = "JOB_COMPLETION_INDEX"
	noIndex                = -1
)

func indexed(job *batchv1.Job) bool {
	return ptr.Deref(job.Spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion
}

// podIndex is the completion index a pod was created for, or noIndex.
func podIndex(pod *corev1.Pod) int {
	v, ok := pod.Annotations[indexAnnotation]
	if !ok {
		return noIndex
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 {
		return noIndex
	}
	return i
}

func annotationInt(pod *corev1.Pod, key string) int32 {
	v, err := strconv.Atoi(pod.Annotations[key])
	if err != nil || v < 0 {
		return 0
	}
	return int32(v)
}

func hasFinalizer(pod *corev1.Pod) bool {
	for _, f := range pod.Finalizers {
		if f == trackingFinalizer {
			return true
		}
	}
	return false
}

// onlyReplaceFailed: pods are replaced only once they reached phase Failed, not while
// they terminate. A pod failure policy implies it, so that its rules see the final phase.
func onlyReplaceFailed(job *batchv1.Job) bool {
	if p := job.Spec.PodReplacementPolicy; p != nil {
		return *p == batchv1.Failed
	}
	return job.Spec.PodFailurePolicy != nil
}

// podFailed: the pod ended in phase Failed, or (unless the job waits for the final phase)
// it is being deleted before it succeeded.
func podFailed(job *batchv1.Job, pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodFailed {
		return true
	}
	return !onlyReplaceFailed(job) && pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodSucceeded
}

// podActive: created, not finished, not being deleted.
func podActive(pod *corev1.Pod) bool {
	return pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed && pod.DeletionTimestamp == nil
}

func podTerminating(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func containerRestarts(pod *corev1.Pod) int32 {
	var n int32
	for _, s := range pod.Status.InitContainerStatuses {
		n += s.RestartCount
	}
	for _, s := range pod.Status.ContainerStatuses {
		n += s.RestartCount
	}
	return n
}

// finishedAt is when a failed pod stopped, which starts its backoff. The containers' finish
// times say it only once every one of them (sidecars included) has terminated: a pod that
// failed with a container still running or never started stopped when it went not Ready.
// Failing that, a deletion stopped it when the deletion began, which is the deletion
// timestamp less the grace period the API server added; the creation time is the last
// resort.
func finishedAt(pod *corev1.Pod) time.Time {
	if t, ok := containersFinishedAt(pod); ok {
		return t
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionFalse && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	if d := pod.DeletionTimestamp; d != nil {
		grace := time.Duration(ptr.Deref(pod.DeletionGracePeriodSeconds, 0)) * time.Second
		return d.Add(-grace)
	}
	return pod.CreationTimestamp.Time
}

// containersFinishedAt is the latest finish of the pod's containers and sidecars (init
// containers that restart always), if all of them have one.
func containersFinishedAt(pod *corev1.Pod) (time.Time, bool) {
	sidecars := map[string]bool{}
	for _, c := range pod.Spec.InitContainers {
		if ptr.Deref(c.RestartPolicy, "") == corev1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
		}
	}
	statuses := slices.Clone(pod.Status.ContainerStatuses)
	for _, s := range pod.Status.InitContainerStatuses {
		if sidecars[s.Name] {
			statuses = append(statuses, s)
		}
	}
	var last time.Time
	for _, s := range statuses {
		term := s.State.Terminated
		if term == nil || term.FinishedAt.IsZero() {
			return time.Time{}, false
		}
		if term.FinishedAt.After(last) {
			last = term.FinishedAt.Time
		}
	}
	return last, !last.IsZero()
}
