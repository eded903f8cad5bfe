// Package broadcastjob holds what the agent's and the hub's BroadcastJob controllers
// share about a job's status: condition reasons, how conditions make a phase, when a job
// has finished, and which status changes users see as events.
package broadcastjob

import (
	"math"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// SetCondition sets one condition, stamped with the status's observed generation.
func SetCondition(status *musterv1.BroadcastJobStatus, condition string, s metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: condition, Status: s, Reason: reason, Message: message, ObservedGeneration: status.ObservedGeneration,
	})
}

// Phase summarises the conditions.
func Phase(status *musterv1.BroadcastJobStatus) musterv1.BroadcastJobPhase {
	switch {
	case meta.IsStatusConditionTrue(status.Conditions, musterv1.BroadcastJobFailed):
		return musterv1.BroadcastJobFailedPh
	case meta.IsStatusConditionTrue(status.Conditions, musterv1.BroadcastJobComplete):
		return musterv1.BroadcastJobCompleted
	case meta.IsStatusConditionTrue(status.Conditions, musterv1.BroadcastJobPaused):
		return musterv1.BroadcastJobPausedPh
	case meta.IsStatusConditionFalse(status.Conditions, musterv1.BroadcastJobNodesEligible):
		return musterv1.BroadcastJobPending
	}
	return musterv1.BroadcastJobRunning
}

// Finished reports whether the job reached Complete or Failed.
func Finished(status *musterv1.BroadcastJobStatus) bool {
	return meta.IsStatusConditionTrue(status.Conditions, musterv1.BroadcastJobComplete) ||
		meta.IsStatusConditionTrue(status.Conditions, musterv1.BroadcastJobFailed)
}

// FailurePolicy is the job's failurePolicy type, FailFast when empty. The API server
// writes FailFast into every job that omits it (as OpenKruise's webhook does); reading an
// empty type the same way keeps the decisions, which also see jobs built in Go, in line
// with what users see in the object.
func FailurePolicy(spec *musterv1.BroadcastJobSpec) musterv1.FailurePolicyType {
	if spec.FailurePolicy.Type == "" {
		return musterv1.FailureFailFast
	}
	return spec.FailurePolicy.Type
}

// PausedAt is the failed-pod count recorded when failurePolicy Pause last paused the job.
func PausedAt(job *musterv1.BroadcastJob) int32 {
	n, err := strconv.ParseInt(job.Annotations[musterv1.PausedAtFailuresAnnotation], 10, 32)
	if err != nil {
		return 0
	}
	return int32(n)
}

// Transition is a user-visible status change, reported as an event.
type Transition struct{ EventType, Reason, Condition, Message string }

// Transitions lists the user-visible changes between two statuses: the job finishing,
// pausing or resuming, and losing or regaining eligible nodes. A job's first status
// reports only what is unusual (nothing eligible, created paused).
func Transitions(before, after *musterv1.BroadcastJobStatus) []Transition {
	var out []Transition
	for _, t := range []string{musterv1.BroadcastJobComplete, musterv1.BroadcastJobFailed, musterv1.BroadcastJobPaused, musterv1.BroadcastJobNodesEligible} {
		was, now := meta.FindStatusCondition(before.Conditions, t), meta.FindStatusCondition(after.Conditions, t)
		if now == nil || (was != nil && was.Status == now.Status) {
			continue
		}
		usual := metav1.ConditionFalse
		if t == musterv1.BroadcastJobNodesEligible {
			usual = metav1.ConditionTrue
		}
		if was == nil && now.Status == usual {
			continue
		}
		reason := now.Reason
		if t == musterv1.BroadcastJobPaused && now.Status == metav1.ConditionFalse && now.Reason == musterv1.BroadcastJobReasonNotPaused {
			reason = musterv1.BroadcastJobReasonResumed
		}
		eventType := corev1.EventTypeNormal
		if t == musterv1.BroadcastJobFailed || (t == musterv1.BroadcastJobNodesEligible && now.Status == metav1.ConditionFalse) || reason == musterv1.BroadcastJobReasonPausedOnFailure {
			eventType = corev1.EventTypeWarning
		}
		out = append(out, Transition{EventType: eventType, Reason: reason, Condition: t, Message: now.Message})
	}
	return out
}

// TTLLeft says how long until a finished job with ttlSecondsAfterFinished is due for
// deletion; ok is false when the job has no TTL or has not finished.
func TTLLeft(job *musterv1.BroadcastJob, now time.Time) (left time.Duration, ok bool) {
	ttl := job.Spec.CompletionPolicy.TTLSecondsAfterFinished
	if ttl == nil || job.Status.CompletionTime == nil {
		return 0, false
	}
	return job.Status.CompletionTime.Add(time.Duration(*ttl) * time.Second).Sub(now), true
}

// PausedReason gives the Paused condition's reason and message for a paused job: a pause
// made by failurePolicy Pause keeps saying so (with failureMessage when it happens now)
// until the job is unpaused, so users can tell it from their own.
func PausedReason(before *musterv1.BroadcastJobStatus, pausingNow bool, failureMessage string) (string, string) {
	if pausingNow {
		return musterv1.BroadcastJobReasonPausedOnFailure, failureMessage
	}
	if c := meta.FindStatusCondition(before.Conditions, musterv1.BroadcastJobPaused); c != nil && c.Status == metav1.ConditionTrue && c.Reason == musterv1.BroadcastJobReasonPausedOnFailure {
		return c.Reason, c.Message
	}
	return musterv1.BroadcastJobReasonPaused, "spec.paused is true: no new pods are created"
}

// MaxDeadlineSeconds is the longest activeDeadlineSeconds a time.Duration can hold.
const MaxDeadlineSeconds = int64(math.MaxInt64 / time.Second)

// Deadline is when a job started at start reaches its activeDeadlineSeconds; false when it
// has none, or one too long for a time.Duration (it never passes).
func Deadline(job *musterv1.BroadcastJob, start time.Time) (time.Time, bool) {
	d := job.Spec.CompletionPolicy.ActiveDeadlineSeconds
	if d == nil || *d > MaxDeadlineSeconds {
		return time.Time{}, false
	}
	return start.Add(time.Duration(*d) * time.Second), true
}

// PausesNow reports whether failurePolicy Pause pauses the job at failed failed pods: it
// is not paused yet and more pods failed than when it last paused.
func PausesNow(job *musterv1.BroadcastJob, failed int32) bool {
	return FailurePolicy(&job.Spec) == musterv1.FailurePause && !job.Spec.Paused && failed > PausedAt(job)
}
