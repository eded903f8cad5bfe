package cronjob

import (
	"time"

	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// TestLostRuns: a run counts as lost only once failover took it off every cluster and
// its placement found none to take it; a run evicted and about to be placed again, or
// one with a shard left, is not.
func TestLostRuns(t *testing.T) {
	scheduled := func(status metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: musterv1.FleetJobScheduled, Status: status, Reason: reason}}
	}
	evicted := musterv1.ClusterJobStatus{ClusterName: "m2", Phase: musterv1.JobEvicted}
	running := musterv1.ClusterJobStatus{ClusterName: "m1", Phase: musterv1.JobRunning}
	fleetJobs := []struct {
		name   string
		status musterv1.FleetJobStatus
		lost   bool
	}{
		{"evicted everywhere, nowhere to go", musterv1.FleetJobStatus{Conditions: scheduled(metav1.ConditionFalse, musterv1.ReasonNoEligibleClusters), Clusters: []musterv1.ClusterJobStatus{evicted}}, true},
		{"evicted, about to be placed again", musterv1.FleetJobStatus{Conditions: scheduled(metav1.ConditionFalse, musterv1.FleetJobReasonShardEvicted), Clusters: []musterv1.ClusterJobStatus{evicted}}, false},
		{"placed again", musterv1.FleetJobStatus{Conditions: scheduled(metav1.ConditionTrue, musterv1.FleetJobReasonPlaced), Clusters: []musterv1.ClusterJobStatus{evicted, running}}, false},
		{"never placed (no cluster at first)", musterv1.FleetJobStatus{Conditions: scheduled(metav1.ConditionFalse, musterv1.ReasonNoEligibleClusters)}, false},
		{"finished before", musterv1.FleetJobStatus{Conditions: append(scheduled(metav1.ConditionFalse, musterv1.ReasonNoEligibleClusters),
			metav1.Condition{Type: musterv1.FleetJobFailed, Status: metav1.ConditionTrue, Reason: "ShardFailed"}), Clusters: []musterv1.ClusterJobStatus{evicted}}, false},
	}
	for _, tc := range fleetJobs {
		if got := fleetJobLost(&tc.status); got != tc.lost {
			t.Errorf("FleetJob %s: lost = %v, want %v", tc.name, got, tc.lost)
		}
	}
	noClusters := []metav1.Condition{{Type: musterv1.BroadcastJobNodesEligible, Status: metav1.ConditionFalse, Reason: musterv1.ReasonNoEligibleClusters}}
	bEvicted := musterv1.ClusterBroadcastStatus{ClusterName: "m2", Phase: musterv1.BroadcastJobEvicted}
	if !broadcastJobLost(&musterv1.BroadcastJobStatus{Conditions: noClusters, Clusters: []musterv1.ClusterBroadcastStatus{bEvicted}}) {
		t.Error("a BroadcastJob evicted everywhere with no cluster left is not lost")
	}
	if broadcastJobLost(&musterv1.BroadcastJobStatus{Conditions: noClusters, Clusters: []musterv1.ClusterBroadcastStatus{bEvicted, {ClusterName: "m1", Phase: musterv1.BroadcastJobRunning}}}) {
		t.Error("a BroadcastJob with a shard left is lost")
	}
}

// TestALostRunBeingDeletedIsNotDeletedAgain: its Works may hold it for as long as the
// cluster is away; each pass would otherwise delete it again and say so again.
func TestALostRunBeingDeletedIsNotDeletedAgain(t *testing.T) {
	deleting := &musterv1.FleetJob{ObjectMeta: metav1.ObjectMeta{Name: "a", DeletionTimestamp: &metav1.Time{}, Finalizers: []string{"x"}}}
	fresh := &musterv1.FleetJob{ObjectMeta: metav1.ObjectMeta{Name: "b"}}
	cj := &musterv1.FleetCronJob{Status: musterv1.FleetCronJobStatus{LastScheduleTime: &metav1.Time{Time: time.Now()}}}
	lost, rest := lostRuns(cj, []child{{obj: deleting, lost: true, finished: true}, {obj: fresh, lost: true, finished: true}})
	if len(lost) != 1 || lost[0].obj != fresh || len(rest) != 1 || rest[0].obj != deleting {
		t.Errorf("lost %v, rest %v; want b to delete, a left as it is", lost, rest)
	}
}
