package broadcastjob

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestDeadline(t *testing.T) {
	for _, tc := range []struct {
		name    string
		seconds *int64
		want    time.Time
		ok      bool
	}{
		{"none", nil, time.Time{}, false},
		{"zero: due at once", new(int64(0)), start, true},
		{"an hour", new(int64(3600)), start.Add(time.Hour), true},
		{"the longest a Duration holds", new(MaxDeadlineSeconds), start.Add(time.Duration(MaxDeadlineSeconds) * time.Second), true},
		// One more second would overflow into a negative Duration: a deadline in the past
		// that fails the job at once.
		{"longer never passes", new(MaxDeadlineSeconds + 1), time.Time{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := &musterv1.BroadcastJob{Spec: musterv1.BroadcastJobSpec{CompletionPolicy: musterv1.CompletionPolicy{ActiveDeadlineSeconds: tc.seconds}}}
			got, ok := Deadline(job, start)
			if ok != tc.ok || !got.Equal(tc.want) {
				t.Errorf("Deadline = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
			if ok && got.Before(start) {
				t.Errorf("deadline %v is before the start %v", got, start)
			}
		})
	}
}

func TestTTLLeft(t *testing.T) {
	finished := metav1.NewTime(start)
	for _, tc := range []struct {
		name     string
		ttl      *int32
		finished *metav1.Time
		now      time.Time
		want     time.Duration
		ok       bool
	}{
		{"no ttl", nil, &finished, start, 0, false},
		{"not finished", new(int32(30)), nil, start, 0, false},
		{"ten seconds after finishing", new(int32(30)), &finished, start.Add(10 * time.Second), 20 * time.Second, true},
		{"overdue", new(int32(30)), &finished, start.Add(time.Minute), -30 * time.Second, true},
		{"ttl zero: due when finished", new(int32(0)), &finished, start, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := &musterv1.BroadcastJob{
				Spec:   musterv1.BroadcastJobSpec{CompletionPolicy: musterv1.CompletionPolicy{TTLSecondsAfterFinished: tc.ttl}},
				Status: musterv1.BroadcastJobStatus{CompletionTime: tc.finished},
			}
			if got, ok := TTLLeft(job, tc.now); got != tc.want || ok != tc.ok {
				t.Errorf("TTLLeft = %s, %v; want %s, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// Pause pauses a job once per new failure: after the user unpauses it, the failures that
// paused it do not pause it again, a further one does.
func TestPausesNow(t *testing.T) {
	for _, tc := range []struct {
		name     string
		policy   musterv1.FailurePolicyType
		paused   bool
		pausedAt string
		failed   int32
		want     bool
	}{
		{"first failure", musterv1.FailurePause, false, "", 1, true},
		{"no failure", musterv1.FailurePause, false, "", 0, false},
		{"unpaused after 2, still 2", musterv1.FailurePause, false, "2", 2, false},
		{"unpaused after 2, a third", musterv1.FailurePause, false, "2", 3, true},
		{"already paused", musterv1.FailurePause, true, "", 5, false},
		{"unreadable record counts as none", musterv1.FailurePause, false, "two", 1, true},
		{"a record past int32 counts as none", musterv1.FailurePause, false, "3000000000", 1, true},
		{"FailFast never pauses", musterv1.FailureFailFast, false, "", 3, false},
		{"Continue never pauses", musterv1.FailureContinue, false, "", 3, false},
		{"the default (FailFast) never pauses", "", false, "", 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := &musterv1.BroadcastJob{Spec: musterv1.BroadcastJobSpec{Paused: tc.paused, FailurePolicy: musterv1.FailurePolicy{Type: tc.policy}}}
			if tc.pausedAt != "" {
				job.Annotations = map[string]string{musterv1.PausedAtFailuresAnnotation: tc.pausedAt}
			}
			if got := PausesNow(job, tc.failed); got != tc.want {
				t.Errorf("PausesNow(failed=%d) = %v, want %v", tc.failed, got, tc.want)
			}
		})
	}
}

// A pause made by failurePolicy Pause keeps its reason and message until the job is
// unpaused, so the user can tell it from a pause of their own.
func TestPausedReason(t *testing.T) {
	pausedBy := func(reason, message string) *musterv1.BroadcastJobStatus {
		s := &musterv1.BroadcastJobStatus{}
		SetCondition(s, musterv1.BroadcastJobPaused, metav1.ConditionTrue, reason, message)
		return s
	}
	for _, tc := range []struct {
		name          string
		before        *musterv1.BroadcastJobStatus
		pausingNow    bool
		reason, msgIs string
	}{
		{"pausing on a failure now", &musterv1.BroadcastJobStatus{}, true, musterv1.BroadcastJobReasonPausedOnFailure, "pod p failed"},
		{"still paused on the earlier failure", pausedBy(musterv1.BroadcastJobReasonPausedOnFailure, "pod q failed"), false, musterv1.BroadcastJobReasonPausedOnFailure, "pod q failed"},
		{"paused by the user", &musterv1.BroadcastJobStatus{}, false, musterv1.BroadcastJobReasonPaused, "spec.paused is true: no new pods are created"},
		{"paused by the user before", pausedBy(musterv1.BroadcastJobReasonPaused, "x"), false, musterv1.BroadcastJobReasonPaused, "spec.paused is true: no new pods are created"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reason, msg := PausedReason(tc.before, tc.pausingNow, "pod p failed")
			if reason != tc.reason || msg != tc.msgIs {
				t.Errorf("PausedReason = %q, %q; want %q, %q", reason, msg, tc.reason, tc.msgIs)
			}
		})
	}
}

// A job created paused says so in an event; one whose pause is lifted by the user reads
// as Resumed; conditions carry the generation the status observed.
func TestTransitionsOfACreatedPausedJob(t *testing.T) {
	after := &musterv1.BroadcastJobStatus{ObservedGeneration: 4}
	SetCondition(after, musterv1.BroadcastJobPaused, metav1.ConditionTrue, musterv1.BroadcastJobReasonPaused, "m")
	got := Transitions(&musterv1.BroadcastJobStatus{}, after)
	if len(got) != 1 || got[0] != (Transition{EventType: "Normal", Reason: musterv1.BroadcastJobReasonPaused, Condition: musterv1.BroadcastJobPaused, Message: "m"}) {
		t.Errorf("transitions of a job created paused = %+v", got)
	}
	if g := after.Conditions[0].ObservedGeneration; g != 4 {
		t.Errorf("condition observedGeneration = %d, want 4", g)
	}
	if Phase(after) != musterv1.BroadcastJobPausedPh || Finished(after) {
		t.Errorf("a paused job reads %s, finished %v", Phase(after), Finished(after))
	}
}
