package job

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// writeStatus stores status when it changed; job then holds what the server returned. A
// write refused as invalid holds the Job's next writes back (see patch.Refusals).
func (r *clusterReconciler) writeStatus(ctx context.Context, job *batchv1.Job, status *batchv1.JobStatus) error {
	if equality.Semantic.DeepEqual(&job.Status, status) {
		return nil
	}
	if err := r.refusals.Check(job); err != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	job.Status = *status
	if err := r.refusals.Observe(ctx, r.Recorder, job, r.Client.Status().Update(ctx, job)); err != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	return nil
}

// suspensionEvent reports a change of the Suspended condition.
type suspensionEvent struct {
	reason, action, note string
}

// reportSuspension keeps the Suspended condition in line with spec.suspend, and returns the
// event that reports its change, for after the status holding it is written. A suspended
// job has no startTime and resuming sets it anew: activeDeadlineSeconds counts continuous
// activity. A job being deleted is not reported suspended: it will not run again anyway.
func reportSuspension(job *batchv1.Job, status *batchv1.JobStatus, now time.Time) *suspensionEvent {
	if suspended(job) && job.DeletionTimestamp != nil {
		return nil
	}
	if suspended(job) {
		status.StartTime = nil
	}
	var cond *batchv1.JobCondition
	for i := range status.Conditions {
		if status.Conditions[i].Type == batchv1.JobSuspended {
			cond = &status.Conditions[i]
		}
	}
	ts := metav1.NewTime(now)
	switch {
	case suspended(job) && (cond == nil || cond.Status != corev1.ConditionTrue):
		if cond == nil {
			status.Conditions = append(status.Conditions, batchv1.JobCondition{Type: batchv1.JobSuspended})
			cond = &status.Conditions[len(status.Conditions)-1]
		}
		cond.Status, cond.Reason, cond.Message, cond.LastProbeTime, cond.LastTransitionTime = corev1.ConditionTrue, musterv1.JobReasonSuspended, "Job suspended", ts, ts
		return &suspensionEvent{reason: musterv1.JobEventReasonSuspended, action: "Suspend", note: "Job suspended"}
	case !suspended(job) && cond != nil && cond.Status == corev1.ConditionTrue:
		cond.Status, cond.Reason, cond.Message, cond.LastProbeTime, cond.LastTransitionTime = corev1.ConditionFalse, musterv1.JobReasonResumed, "Job resumed", ts, ts
		status.StartTime = &ts
		return &suspensionEvent{reason: musterv1.JobEventReasonResumed, action: "Resume", note: "Job resumed"}
	}
	return nil
}

// reportSuspension emits e, once the status that records it is written.
func (r *clusterReconciler) reportSuspension(job *batchv1.Job, e *suspensionEvent) {
	if e != nil {
		r.Recorder.Eventf(job, nil, corev1.EventTypeNormal, e.reason, e.action, "%s", e.note)
	}
}

func (r *clusterReconciler) reportFinished(job *batchv1.Job) {
	if c := findCondition(&job.Status, batchv1.JobComplete); c != nil {
		r.Recorder.Eventf(job, nil, corev1.EventTypeNormal, musterv1.JobEventReasonCompleted, "Complete", "Job completed")
		return
	}
	if c := findCondition(&job.Status, batchv1.JobFailed); c != nil {
		r.Recorder.Eventf(job, nil, corev1.EventTypeWarning, c.Reason, "Fail", "%s", c.Message)
	}
}
