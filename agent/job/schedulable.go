package job

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// unschedulableSince returns, of the active pods the scheduler could not place, how many
// there are, since when the longest-waiting one waits, and the scheduler's word on it.
func unschedulableSince(pods []*corev1.Pod) (count int, since metav1.Time, message string) {
	for _, p := range pods {
		if !podActive(p) || p.Spec.NodeName != "" {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type != corev1.PodScheduled || c.Status != corev1.ConditionFalse || c.Reason != corev1.PodReasonUnschedulable {
				continue
			}
			if count == 0 || c.LastTransitionTime.Before(&since) {
				since, message = c.LastTransitionTime, c.Message
			}
			count++
		}
	}
	return count, since, message
}

// reportUnschedulable keeps the PodsUnschedulable condition in line with the pods: True
// from the moment the longest-waiting unschedulable pod became so, False once none is
// left. Status-only, like the pod counts, so it costs no write of its own when nothing
// changed.
func reportUnschedulable(status *batchv1.JobStatus, pods []*corev1.Pod, now metav1.Time) {
	count, since, message := unschedulableSince(pods)
	var cond *batchv1.JobCondition
	for i := range status.Conditions {
		if status.Conditions[i].Type == musterv1.JobPodsUnschedulable {
			cond = &status.Conditions[i]
		}
	}
	switch {
	case count > 0:
		if cond == nil {
			status.Conditions = append(status.Conditions, batchv1.JobCondition{Type: musterv1.JobPodsUnschedulable})
			cond = &status.Conditions[len(status.Conditions)-1]
		}
		cond.Status, cond.Reason, cond.LastTransitionTime = corev1.ConditionTrue, musterv1.ReasonUnschedulable, since
		cond.Message, cond.LastProbeTime = unschedulableMessage(count, message), since
	case cond != nil && cond.Status == corev1.ConditionTrue:
		cond.Status, cond.Reason, cond.Message = corev1.ConditionFalse, musterv1.JobReasonScheduled, "every active pod is scheduled"
		cond.LastTransitionTime, cond.LastProbeTime = now, now
	}
}

// unschedulableMessage: "2 pods cannot be scheduled: <the scheduler's message>".
func unschedulableMessage(count int, scheduler string) string {
	if count == 1 {
		return "1 pod cannot be scheduled: " + scheduler
	}
	return fmt.Sprintf("%d pods cannot be scheduled: %s", count, scheduler)
}
