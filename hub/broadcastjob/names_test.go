package broadcastjob

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// TestWithNameTakenTwiceWritesNothing: a pass that finds the name still taken leaves the
// status as stored, even though the plan first set ShardsApplied from the shards (which
// would stamp a new transition time and make every pass write, and wake, again).
func TestWithNameTakenTwiceWritesNothing(t *testing.T) {
	other := &musterv1.Work{ObjectMeta: metav1.ObjectMeta{Name: "broadcastjob-a-b-c", Namespace: "muster-member-c2"}}
	job := hubJob()
	first := withNameTaken(fleetPlan{shards: map[string]shardSpec{"c2": {}}, status: *job.Status.DeepCopy()}, job, nil, other)
	job.Status = first.status
	// Condition times have a resolution of a second: the stored one is from an earlier
	// second than any this pass could stamp.
	for i := range job.Status.Conditions {
		job.Status.Conditions[i].LastTransitionTime = metav1.NewTime(job.Status.Conditions[i].LastTransitionTime.Add(-2 * time.Second))
	}
	status := *job.Status.DeepCopy()
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: musterv1.BroadcastJobShardsApplied, Status: metav1.ConditionTrue, Reason: "Applied"})
	second := withNameTaken(fleetPlan{shards: map[string]shardSpec{"c2": {}}, status: status}, job, nil, other)
	if diff := cmp.Diff(job.Status, second.status); diff != "" {
		t.Errorf("the second pass changes the stored status (-stored +new):\n%s", diff)
	}
}

func TestWithNameTaken(t *testing.T) {
	other := &musterv1.Work{ObjectMeta: metav1.ObjectMeta{Name: "broadcastjob-a-b-c", Namespace: "muster-member-c2", Labels: map[string]string{
		musterv1.BroadcastJobNamespaceLabel: "a", musterv1.BroadcastJobNameLabel: "b-c",
	}}}
	handMade := &musterv1.Work{ObjectMeta: metav1.ObjectMeta{Name: "broadcastjob-a-b-c", Namespace: "muster-member-c2"}}
	applyFailed := metav1.Condition{Type: musterv1.BroadcastJobShardsApplied, Status: metav1.ConditionFalse, Reason: musterv1.ReasonApplyFailed, Message: "cluster c1: quota"}
	taken := metav1.Condition{Type: musterv1.BroadcastJobShardsApplied, Status: metav1.ConditionFalse, Reason: musterv1.ReasonShardNameTaken}
	tests := []struct {
		name string
		// prev is the job's ShardsApplied before this round; nil for none.
		prev   *metav1.Condition
		taken  *musterv1.Work
		news   []metav1.Condition
		before time.Duration
		// wantNews are the reasons announced; wantRequeue when to look again.
		wantNews    []string
		wantMessage string
		wantRequeue time.Duration
	}{
		{name: "first seen", taken: other, wantNews: []string{musterv1.ReasonShardNameTaken}, wantRequeue: takenRetry,
			wantMessage: "Work muster-member-c2/broadcastjob-a-b-c, which would carry the shard, belongs to BroadcastJob a/b-c: delete that Work or rename this BroadcastJob"},
		{name: "already reported", prev: &taken, taken: other, wantRequeue: takenRetry},
		{name: "a refusal decided from the shards is replaced, not announced", prev: &taken, taken: other, news: []metav1.Condition{applyFailed}, wantRequeue: takenRetry},
		{name: "a sooner deadline is kept", prev: &taken, taken: other, before: time.Second, wantRequeue: time.Second},
		{name: "a later deadline waits for the retry", prev: &taken, taken: other, before: time.Hour, wantRequeue: takenRetry},
		{name: "a Work made by hand", prev: &applyFailed, taken: handMade, wantNews: []string{musterv1.ReasonShardNameTaken}, wantRequeue: takenRetry,
			wantMessage: "Work muster-member-c2/broadcastjob-a-b-c, which would carry the shard, belongs to another object: delete that Work or rename this BroadcastJob"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			job := hubJob(func(j *musterv1.BroadcastJob) {
				if tc.prev != nil {
					j.Status.Conditions = []metav1.Condition{*tc.prev}
				}
			})
			works := map[string]*musterv1.Work{"c1": {}}
			p := fleetPlan{
				shards:       map[string]shardSpec{"c1": {parallelism: ptr(2)}, "c2": {parallelism: ptr(2)}, "c3": {}},
				status:       *job.Status.DeepCopy(),
				news:         tc.news,
				requeueAfter: tc.before,
			}
			got := withNameTaken(p, job, works, tc.taken)
			if diff := cmp.Diff([]string{"c1"}, slices.Sorted(maps.Keys(got.shards))); diff != "" {
				t.Errorf("shards (-want +got):\n%s", diff)
			}
			if *got.shards["c1"].parallelism != 2 {
				t.Errorf("the existing shard changed: %+v", got.shards["c1"])
			}
			c := meta.FindStatusCondition(got.status.Conditions, musterv1.BroadcastJobShardsApplied)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != musterv1.ReasonShardNameTaken {
				t.Fatalf("ShardsApplied = %+v, want False ShardNameTaken", c)
			}
			if tc.wantMessage != "" && c.Message != tc.wantMessage {
				t.Errorf("message %q, want %q", c.Message, tc.wantMessage)
			}
			var news []string
			for _, n := range got.news {
				news = append(news, n.Reason)
			}
			if diff := cmp.Diff(tc.wantNews, news); diff != "" {
				t.Errorf("news (-want +got):\n%s", diff)
			}
			if got.requeueAfter != tc.wantRequeue {
				t.Errorf("requeueAfter = %v, want %v", got.requeueAfter, tc.wantRequeue)
			}
		})
	}
}

// TestHubManagedKeepsJobsThatHoldShards: a job whose placement was removed after its
// shards were placed still holds the finalizer, and its deletion must reach the hub so
// the shards are removed and the finalizer released.
func TestHubManagedKeepsJobsThatHoldShards(t *testing.T) {
	reported := []metav1.Condition{{Type: musterv1.BroadcastJobNodesEligible, Status: metav1.ConditionFalse, Reason: "NoPlacement"}}
	for _, tc := range []struct {
		name string
		job  func(*musterv1.BroadcastJob)
		want bool
	}{
		{"with a placement", func(*musterv1.BroadcastJob) {}, true},
		{"without placement, not reported yet", func(j *musterv1.BroadcastJob) { j.Spec.Placement = nil }, true},
		{"without placement, reported, a member's job", func(j *musterv1.BroadcastJob) { j.Spec.Placement, j.Status.Conditions = nil, reported }, false},
		{"placement removed while holding shards", func(j *musterv1.BroadcastJob) {
			j.Spec.Placement, j.Status.Conditions, j.Finalizers = nil, reported, []string{musterv1.ShardsFinalizer}
		}, true},
	} {
		if got := hubManaged.Generic(event.GenericEvent{Object: hubJob(tc.job)}); got != tc.want {
			t.Errorf("%s: hubManaged = %v, want %v", tc.name, got, tc.want)
		}
	}
}
