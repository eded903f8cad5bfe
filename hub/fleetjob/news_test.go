package fleetjob

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestScheduledNews(t *testing.T) {
	cond := func(status metav1.ConditionStatus, reason string) *metav1.Condition {
		return &metav1.Condition{Type: musterv1.FleetJobScheduled, Status: status, Reason: reason, Message: "m"}
	}
	waiting := cond(metav1.ConditionFalse, musterv1.ReasonNoEligibleClusters)
	taken := cond(metav1.ConditionFalse, musterv1.ReasonShardNameTaken)
	placed := cond(metav1.ConditionTrue, musterv1.FleetJobReasonPlaced)
	bySpread := cond(metav1.ConditionTrue, musterv1.FleetJobReasonPlacedBySpread)
	tests := []struct {
		name          string
		before, after *metav1.Condition
		want          string
	}{
		{name: "no condition", before: nil, after: nil},
		{name: "first placement", before: nil, after: placed, want: musterv1.FleetJobReasonPlaced},
		{name: "placed after waiting for a cluster", before: waiting, after: placed, want: musterv1.FleetJobReasonPlaced},
		{name: "placed after a name was taken", before: taken, after: placed, want: musterv1.FleetJobReasonPlaced},
		{name: "still placed", before: placed, after: placed},
		{name: "waiting is logged, not announced", before: nil, after: waiting},
		{name: "a name found taken", before: waiting, after: taken, want: musterv1.ReasonShardNameTaken},
		{name: "a name still taken", before: taken, after: taken},
		{name: "a spread announces its placements with its changes", before: nil, after: bySpread},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := scheduledNews(tt.before, tt.after)
			switch {
			case tt.want == "" && len(got) != 0:
				t.Errorf("events %+v, want none", got)
			case tt.want != "" && (len(got) != 1 || got[0].reason != tt.want || got[0].note != "m"):
				t.Errorf("events %+v, want one %s saying the condition's message", got, tt.want)
			}
		})
	}
}

func TestDecidePlacement(t *testing.T) {
	available := func(name string) musterv1.MemberCluster {
		mc := musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: musterv1.MemberClusterSpec{Accepted: true}}
		mc.Status.Conditions = []metav1.Condition{{Type: musterv1.MemberClusterAvailable, Status: metav1.ConditionTrue, Reason: "Test"}}
		return mc
	}
	fj := &musterv1.FleetJob{ObjectMeta: metav1.ObjectMeta{Name: "workers", Generation: 3}}
	fj.Spec.Placement.Mode = musterv1.PlacementDuplicate

	none := decidePlacement(fj, nil, nil)
	if len(none.shards) != 0 || none.scheduled.Status != metav1.ConditionFalse || none.scheduled.Reason != musterv1.ReasonNoEligibleClusters || none.scheduled.ObservedGeneration != 3 {
		t.Errorf("without clusters: %+v", none)
	}
	two := decidePlacement(fj, []musterv1.MemberCluster{available("b"), available("a")}, nil)
	if len(two.shards) != 2 || two.scheduled.Status != metav1.ConditionTrue || two.scheduled.Reason != musterv1.FleetJobReasonPlaced ||
		two.scheduled.Message != placedMessage(musterv1.PlacementDuplicate, []string{"a", "b"}) {
		t.Errorf("with two clusters: %+v", two)
	}
}
