package builders

import (
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// PodBuilder builds a Pod.
type PodBuilder struct{ pod corev1.Pod }

// MakePod starts a Pending pod with one container, its UID equal to its name so that
// tests can name the pods they expect by UID.
func MakePod(name, namespace string) *PodBuilder {
	return &PodBuilder{pod: corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID(name)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}}
}

// Obj returns a copy of the Pod built so far.
func (b *PodBuilder) Obj() *corev1.Pod { return b.pod.DeepCopy() }

func (b *PodBuilder) Phase(p corev1.PodPhase) *PodBuilder {
	b.pod.Status.Phase = p
	return b
}

// Running is scheduled on a node and in phase Running.
func (b *PodBuilder) Running() *PodBuilder {
	b.pod.Spec.NodeName = "node"
	b.pod.Status.Phase = corev1.PodRunning
	return b
}

// Ready adds a True Ready condition.
func (b *PodBuilder) Ready() *PodBuilder {
	return b.Condition(corev1.PodReady, corev1.ConditionTrue)
}

func (b *PodBuilder) NodeName(n string) *PodBuilder {
	b.pod.Spec.NodeName = n
	return b
}

// Index sets the completion index the way the Job controller does: annotation and label.
func (b *PodBuilder) Index(i int) *PodBuilder {
	b.Annotation(batchv1.JobCompletionIndexAnnotation, strconv.Itoa(i))
	if b.pod.Labels == nil {
		b.pod.Labels = map[string]string{}
	}
	b.pod.Labels[batchv1.JobCompletionIndexAnnotation] = strconv.Itoa(i)
	return b
}

// TrackingFinalizer adds the Job controller's batch.kubernetes.io/job-tracking finalizer.
func (b *PodBuilder) TrackingFinalizer() *PodBuilder {
	b.pod.Finalizers = append(b.pod.Finalizers, batchv1.JobTrackingFinalizer)
	return b
}

func (b *PodBuilder) Annotation(key, value string) *PodBuilder {
	if b.pod.Annotations == nil {
		b.pod.Annotations = map[string]string{}
	}
	b.pod.Annotations[key] = value
	return b
}

// Created sets the creation timestamp.
func (b *PodBuilder) Created(t time.Time) *PodBuilder {
	b.pod.CreationTimestamp = metav1.NewTime(t)
	return b
}

// Deleting marks the pod as being deleted at t, with no grace period.
func (b *PodBuilder) Deleting(t time.Time) *PodBuilder {
	b.pod.DeletionTimestamp = ptr.To(metav1.NewTime(t))
	return b
}

// Condition adds a pod condition.
func (b *PodBuilder) Condition(t corev1.PodConditionType, s corev1.ConditionStatus) *PodBuilder {
	b.pod.Status.Conditions = append(b.pod.Status.Conditions, corev1.PodCondition{Type: t, Status: s})
	return b
}

// Exited records that the named container terminated with code at finished.
func (b *PodBuilder) Exited(container string, code int32, finished time.Time) *PodBuilder {
	b.pod.Status.ContainerStatuses = append(b.pod.Status.ContainerStatuses, corev1.ContainerStatus{
		Name:  container,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, FinishedAt: metav1.NewTime(finished)}},
	})
	return b
}

// Restarts records a running container that restarted n times.
func (b *PodBuilder) Restarts(n int32) *PodBuilder {
	b.pod.Status.ContainerStatuses = append(b.pod.Status.ContainerStatuses, corev1.ContainerStatus{
		Name: "main", RestartCount: n, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
	})
	return b
}
