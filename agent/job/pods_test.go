package job

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestFinishedAt(t *testing.T) {
	base := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) metav1.Time { return metav1.NewTime(base.Add(time.Duration(s) * time.Second)) }
	terminated := func(name string, s int) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: at(s)}}}
	}
	running := func(name string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	}
	notReady := func(s int) []corev1.PodCondition {
		return []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: at(s)}}
	}
	sidecar := []corev1.Container{{Name: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}, {Name: "setup"}}
	deleted := at(100)
	for _, tc := range []struct {
		name string
		pod  corev1.Pod
		want int
	}{
		{"latest of the terminated containers", corev1.Pod{Status: corev1.PodStatus{
			ContainerStatuses: []corev1.ContainerStatus{terminated("a", 5), terminated("b", 7)}, Conditions: notReady(9)}}, 7},
		{"a container still running: the Ready=False transition", corev1.Pod{Status: corev1.PodStatus{
			ContainerStatuses: []corev1.ContainerStatus{terminated("a", 5), running("b")}, Conditions: notReady(9)}}, 9},
		{"a sidecar still running: the Ready=False transition", corev1.Pod{Spec: corev1.PodSpec{InitContainers: sidecar}, Status: corev1.PodStatus{
			InitContainerStatuses: []corev1.ContainerStatus{running("proxy"), terminated("setup", 1)},
			ContainerStatuses:     []corev1.ContainerStatus{terminated("a", 5)}, Conditions: notReady(9)}}, 9},
		{"a sidecar finishing last", corev1.Pod{Spec: corev1.PodSpec{InitContainers: sidecar}, Status: corev1.PodStatus{
			InitContainerStatuses: []corev1.ContainerStatus{terminated("proxy", 8), terminated("setup", 1)},
			ContainerStatuses:     []corev1.ContainerStatus{terminated("a", 5)}, Conditions: notReady(9)}}, 8},
		{"a finish time not set: the Ready=False transition", corev1.Pod{Status: corev1.PodStatus{
			ContainerStatuses: []corev1.ContainerStatus{terminated("a", 5), {Name: "b", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}}},
			Conditions:        notReady(9)}}, 9},
		{"no statuses, not Ready: that transition", corev1.Pod{Status: corev1.PodStatus{Conditions: notReady(9)}}, 9},
		{"deleted: the deletion less its grace period", corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			CreationTimestamp: at(0), DeletionTimestamp: &deleted, DeletionGracePeriodSeconds: ptr.To[int64](30)},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{running("a")}}}, 70},
		{"nothing else: the creation", corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: at(3)}}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := finishedAt(&tc.pod); !got.Equal(at(tc.want).Time) {
				t.Errorf("finishedAt = +%v, want +%ds", got.Sub(base), tc.want)
			}
		})
	}
}
