package broadcastjob

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestTransitions(t *testing.T) {
	running := &musterv1.BroadcastJobStatus{}
	meta.SetStatusCondition(&running.Conditions, metav1.Condition{Type: musterv1.BroadcastJobPaused, Status: metav1.ConditionFalse, Reason: musterv1.BroadcastJobReasonNotPaused})
	meta.SetStatusCondition(&running.Conditions, metav1.Condition{Type: musterv1.BroadcastJobNodesEligible, Status: metav1.ConditionTrue, Reason: musterv1.BroadcastJobReasonNodesEligible})
	with := func(base *musterv1.BroadcastJobStatus, c, s, reason string) *musterv1.BroadcastJobStatus {
		out := base.DeepCopy()
		meta.SetStatusCondition(&out.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionStatus(s), Reason: reason})
		return out
	}
	cases := []struct {
		name          string
		before, after *musterv1.BroadcastJobStatus
		want          []string
	}{
		{"a normal first status is quiet", &musterv1.BroadcastJobStatus{}, running, nil},
		{"no eligible node on the first status", &musterv1.BroadcastJobStatus{}, with(running, musterv1.BroadcastJobNodesEligible, "False", musterv1.BroadcastJobReasonNoEligibleNodes), []string{"Warning/NoEligibleNodes"}},
		{"completing", running, with(running, musterv1.BroadcastJobComplete, "True", musterv1.BroadcastJobReasonCompleted), []string{"Normal/Completed"}},
		{"failing", running, with(running, musterv1.BroadcastJobFailed, "True", musterv1.BroadcastJobReasonPodFailed), []string{"Warning/PodFailed"}},
		{"pausing on failure", running, with(running, musterv1.BroadcastJobPaused, "True", musterv1.BroadcastJobReasonPausedOnFailure), []string{"Warning/PausedOnFailure"}},
		{"resuming", with(running, musterv1.BroadcastJobPaused, "True", musterv1.BroadcastJobReasonPaused), running, []string{"Normal/Resumed"}},
		{"nothing changed", running, running, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range Transitions(tc.before, tc.after) {
				got = append(got, e.EventType+"/"+e.Reason)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("transitions = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPhase(t *testing.T) {
	cases := []struct {
		name  string
		conds []metav1.Condition
		want  musterv1.BroadcastJobPhase
	}{
		{"nothing yet", nil, musterv1.BroadcastJobRunning},
		{"no eligible nodes", []metav1.Condition{{Type: musterv1.BroadcastJobNodesEligible, Status: metav1.ConditionFalse}}, musterv1.BroadcastJobPending},
		{"paused wins over pending", []metav1.Condition{{Type: musterv1.BroadcastJobNodesEligible, Status: metav1.ConditionFalse}, {Type: musterv1.BroadcastJobPaused, Status: metav1.ConditionTrue}}, musterv1.BroadcastJobPausedPh},
		{"complete", []metav1.Condition{{Type: musterv1.BroadcastJobComplete, Status: metav1.ConditionTrue}, {Type: musterv1.BroadcastJobPaused, Status: metav1.ConditionFalse}}, musterv1.BroadcastJobCompleted},
		{"failed wins", []metav1.Condition{{Type: musterv1.BroadcastJobFailed, Status: metav1.ConditionTrue}, {Type: musterv1.BroadcastJobPaused, Status: metav1.ConditionTrue}}, musterv1.BroadcastJobFailedPh},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &musterv1.BroadcastJobStatus{Conditions: tc.conds}
			if got := Phase(s); got != tc.want {
				t.Errorf("Phase = %s, want %s", got, tc.want)
			}
			if Finished(s) != (tc.want == musterv1.BroadcastJobCompleted || tc.want == musterv1.BroadcastJobFailedPh) {
				t.Errorf("Finished disagrees with phase %s", tc.want)
			}
		})
	}
}

func TestFailurePolicy(t *testing.T) {
	for _, tc := range []struct {
		set, want musterv1.FailurePolicyType
	}{
		{"", musterv1.FailureFailFast},
		{musterv1.FailureContinue, musterv1.FailureContinue},
		{musterv1.FailureFailFast, musterv1.FailureFailFast},
		{musterv1.FailurePause, musterv1.FailurePause},
	} {
		spec := &musterv1.BroadcastJobSpec{FailurePolicy: musterv1.FailurePolicy{Type: tc.set}}
		if got := FailurePolicy(spec); got != tc.want {
			t.Errorf("FailurePolicy(%q) = %q, want %q", tc.set, got, tc.want)
		}
	}
}
