package fleetjob

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/placement/clusters"
)

func indexedJob(fj *musterv1.FleetJob) {
	fj.Spec.Template.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
}

// describeParts writes parts as "cluster p=.. c=.. {fleet indexes} +carried".
func describeParts(parts []shard) string {
	var out []string
	for _, p := range parts {
		d := fmt.Sprintf("%s p=%s c=%s", p.cluster, itoa(p.parallelism), itoa(p.completions))
		if p.fleetIndexes != "" {
			d += " {" + p.fleetIndexes + "}"
		}
		if p.carried > 0 {
			d += fmt.Sprintf(" +%d", p.carried)
		}
		out = append(out, d)
	}
	return strings.Join(out, "; ")
}

// TestRemainderIsPlacedOnTheOtherClusters: what an evicted shard of a Divided job leaves
// unfinished is exactly the indexes the hub has not seen succeed (or the completions left),
// divided among the clusters that can take it by the usual rules; what succeeded stays
// counted once, with the first part.
func TestRemainderIsPlacedOnTheOtherClusters(t *testing.T) {
	rangeShard := func(start, end, parallelism int32, st *batchv1.JobStatus) shardState {
		return shardState{shard: shard{cluster: "c2", parallelism: ptr.To(parallelism), completions: ptr.To(end - start), indexes: &musterv1.IndexRange{Start: start, End: end}}, status: st, workUID: "w2"}
	}
	cases := []struct {
		name     string
		fj       *musterv1.FleetJob
		from     shardState
		eligible []string
		fit      map[string]int
		want     string
		none     bool
	}{
		{
			name:     "the indexes not seen to succeed move, in order",
			fj:       fleetJob(musterv1.PlacementDivided, 4, 8, indexedJob),
			from:     rangeShard(4, 8, 2, &batchv1.JobStatus{Succeeded: 2, CompletedIndexes: "0,2"}),
			eligible: []string{"c1"},
			want:     "c1 p=02 c=02 {5,7} +2",
		},
		{
			name:     "divided by the clusters' fitting nodes, each part a slice of what is left",
			fj:       fleetJob(musterv1.PlacementDivided, 6, 12, indexedJob),
			from:     rangeShard(6, 12, 4, &batchv1.JobStatus{Succeeded: 1, CompletedIndexes: "1"}),
			eligible: []string{"c1", "c3"}, fit: map[string]int{"c1": 1, "c3": 3},
			want: "c1 p=01 c=01 {6} +1; c3 p=03 c=04 {8-11}",
		},
		{
			name: "a part of a part moves what it left of its own set",
			fj:   fleetJob(musterv1.PlacementDivided, 4, 8, indexedJob),
			from: shardState{shard: shard{cluster: "c2", parallelism: ptr.To[int32](2), completions: ptr.To[int32](3), fleetIndexes: "1,5,7", carried: 4, part: "p"},
				status: &batchv1.JobStatus{Succeeded: 1, CompletedIndexes: "1"}, workUID: "w2"},
			eligible: []string{"c1"},
			want:     "c1 p=02 c=02 {1,7} +5",
		},
		{
			name:     "a NonIndexed shard leaves the completions it has not finished",
			fj:       fleetJob(musterv1.PlacementDivided, 4, 10),
			from:     shardState{shard: shard{cluster: "c2", parallelism: ptr.To[int32](2), completions: ptr.To[int32](5)}, status: &batchv1.JobStatus{Succeeded: 3}, workUID: "w2"},
			eligible: []string{"c1"},
			want:     "c1 p=02 c=02 +3",
		},
		{
			name:     "a division's weights that name only the clusters left fall back to fitting nodes",
			fj:       fleetJob(musterv1.PlacementDivided, 4, 8, indexedJob, weights("c2", 1)),
			from:     rangeShard(0, 8, 4, nil),
			eligible: []string{"c1", "c3"},
			want:     "c1 p=02 c=04 {0-3}; c3 p=02 c=04 {4-7}",
		},
		{
			name:     "no cluster to take it: nothing is placed",
			fj:       fleetJob(musterv1.PlacementDivided, 4, 8, indexedJob),
			from:     rangeShard(4, 8, 2, nil),
			eligible: nil,
			none:     true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rest, left := remainderOf(&tc.fj.Spec.Template.Spec, tc.from)
			if !left {
				t.Fatal("remainderOf found nothing left")
			}
			parts := placeRemainder(tc.fj, tc.from, rest, 0, tc.eligible, tc.fit)
			if tc.none {
				if len(parts) != 0 {
					t.Fatalf("parts %s, want none", describeParts(parts))
				}
				return
			}
			if got := describeParts(parts); got != tc.want {
				t.Errorf("parts %s, want %s", got, tc.want)
			}
			for _, p := range parts {
				if p.part == "" || p.part != parts[0].part || p.replaces != tc.from.workUID || p.indexes != nil {
					t.Errorf("part %+v: want the same part name on each, replacing %s, with a set of indexes and no range", p, tc.from.workUID)
				}
			}
		})
	}
}

func weights(cluster string, w int32) func(*musterv1.FleetJob) {
	return func(fj *musterv1.FleetJob) {
		fj.Spec.Placement.Division = &musterv1.Division{Weights: []musterv1.ClusterWeight{{ClusterName: cluster, Weight: w}}}
	}
}

// TestNothingLeftNothingMoves: a shard whose every index or completion the hub saw
// succeed is finished in all but its Job's condition; it stays and keeps its count.
func TestNothingLeftNothingMoves(t *testing.T) {
	for name, tc := range map[string]struct {
		fj   *musterv1.FleetJob
		from shardState
	}{
		"Indexed":             {fleetJob(musterv1.PlacementDivided, 2, 4, indexedJob), shardState{shard: shard{completions: ptr.To[int32](2), indexes: &musterv1.IndexRange{Start: 2, End: 4}}, status: &batchv1.JobStatus{Succeeded: 2, CompletedIndexes: "0,1"}}},
		"NonIndexed":          {fleetJob(musterv1.PlacementDivided, 2, 4), shardState{shard: shard{completions: ptr.To[int32](2)}, status: &batchv1.JobStatus{Succeeded: 2}}},
		"without completions": {fleetJob(musterv1.PlacementDivided, 2, 4, workQueue), shardState{status: &batchv1.JobStatus{Succeeded: 1}}},
	} {
		if _, left := remainderOf(&tc.fj.Spec.Template.Spec, tc.from); left {
			t.Errorf("%s: something left of a shard that is done", name)
		}
	}
}

// TestSupersededShardsNoLongerCount: a shard whose parts an earlier round placed is
// evicted even when that round could not record it.
func TestSupersededShardsNoLongerCount(t *testing.T) {
	states := []shardState{
		{shard: shard{cluster: "c1"}, workUID: "w1"},
		{shard: shard{cluster: "c2"}, workUID: "w2"},
		{shard: shard{cluster: "c1", part: "p", replaces: "w2"}, workUID: "w3"},
	}
	stay, gone := superseded(states)
	if len(stay) != 2 || len(gone) != 1 || gone[0].state.workUID != "w2" || len(gone[0].parts) != 1 || gone[0].parts[0].workUID != "w3" {
		t.Errorf("stay %v, gone %v; want w1 and w3 to stay, w2 gone with its part w3", stay, gone)
	}
}

// TestUncoveredIsWhatAnInterruptedMoveLeft: when an error cut a placement of parts
// short, the next attempt places exactly what the written parts do not run, under names
// of its own, and carries the evicted shard's successes only if no written part does.
func TestUncoveredIsWhatAnInterruptedMoveLeft(t *testing.T) {
	spec := fleetJob(musterv1.PlacementDivided, 4, 8, indexedJob).Spec.Template.Spec
	from := shardState{shard: shard{cluster: "c2", parallelism: ptr.To[int32](4), completions: ptr.To[int32](8), indexes: &musterv1.IndexRange{Start: 0, End: 8}},
		status: &batchv1.JobStatus{Succeeded: 2, CompletedIndexes: "0,5"}, workUID: "w2"}
	part := func(set string, carried int32) shardState {
		return shardState{shard: shard{cluster: "c1", completions: ptr.To(int32(len(strings.Split(set, ",")))), fleetIndexes: set, carried: carried, part: "p", replaces: "w2"}}
	}
	cases := []struct {
		name    string
		parts   []shardState
		want    string
		carried int32
		none    bool
	}{
		{name: "no part yet: the whole rest, carrying the successes", want: "1-4,6,7", carried: 2},
		{name: "the first part written: the rest of the rest, carrying nothing", parts: []shardState{part("1,2", 2)}, want: "3,4,6,7"},
		{name: "every part written: nothing", parts: []shardState{part("1,2", 2), part("3,4,6,7", 0)}, none: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, left := uncovered(&spec, from, tc.parts)
			if tc.none {
				if left {
					t.Fatalf("left %s, want nothing", r.indexes.String())
				}
				return
			}
			if !left || r.indexes.String() != tc.want || r.carried != tc.carried || ptr.Deref(r.completions, 0) != int32(r.indexes.Len()) {
				t.Errorf("left %v: %s carrying %d (completions %d), want %s carrying %d", left, r.indexes.String(), r.carried, ptr.Deref(r.completions, 0), tc.want, tc.carried)
			}
		})
	}
	if partOf("w2", 0) == partOf("w2", 1) {
		t.Error("a later attempt's parts are named as the first's")
	}
}

// TestAFinishedJobDoesNotFailOver: once a FleetJob has failed (its other shards stopped by
// FailFast) or completed, a shard on a cluster it no longer tolerates stays: moving it
// would start pods again for a job that is over.
func TestAFinishedJobDoesNotFailOver(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	tainted := &musterv1.MemberCluster{Spec: musterv1.MemberClusterSpec{Accepted: true, Taints: []corev1.Taint{{
		Key: musterv1.UnreachableTaintKey, Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: now.Add(-time.Hour)},
	}}}}
	states := []shardState{{shard: shard{cluster: "c2", completions: ptr.To[int32](4), indexes: &musterv1.IndexRange{Start: 4, End: 8}, suspend: true}, status: &batchv1.JobStatus{}}}
	policy := clusters.EvictionPolicy{Since: now.Add(-2 * time.Hour), UnreachableTolerationSeconds: 300}
	fj := fleetJob(musterv1.PlacementDivided, 4, 8, indexedJob)
	if due, _ := dueEvictions(fj, states, map[string]*musterv1.MemberCluster{"c2": tainted}, policy, now); len(due) != 1 {
		t.Fatalf("a running job's shard: %d due, want 1", len(due))
	}
	fj.Status.Conditions = []metav1.Condition{{Type: musterv1.FleetJobFailed, Status: metav1.ConditionTrue, Reason: musterv1.FleetJobReasonShardFailed}}
	if due, _ := dueEvictions(fj, states, map[string]*musterv1.MemberCluster{"c2": tainted}, policy, now); len(due) != 0 {
		t.Errorf("a failed job's stopped shard is due to move: %+v", due)
	}
}

// TestFencedShardsAreDueByTheirAgentOrTheirFence: a shard whose agent ended it for the
// fence (Failed, its pods gone) is due at once, taint or none; one whose pods still
// terminate (FailureTarget) is not yet; and under the unreachable taint a shard placed
// with a fence stays the margin past it, however short its job's toleration became.
func TestFencedShardsAreDueByTheirAgentOrTheirFence(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	fencing := clusters.Fencing{Grace: 40 * time.Second, Margin: time.Minute}
	policy := clusters.EvictionPolicy{Since: now.Add(-time.Hour), UnreachableTolerationSeconds: 300, Fencing: fencing}
	fenced := func(types ...batchv1.JobConditionType) *batchv1.JobStatus {
		s := &batchv1.JobStatus{}
		for _, ct := range types {
			s.Conditions = append(s.Conditions, batchv1.JobCondition{Type: ct, Status: corev1.ConditionTrue, Reason: musterv1.JobReasonFenced})
		}
		return s
	}
	healthy := &musterv1.MemberCluster{Spec: musterv1.MemberClusterSpec{Accepted: true}}
	taintedAt := func(ago time.Duration) *musterv1.MemberCluster {
		return &musterv1.MemberCluster{Spec: musterv1.MemberClusterSpec{Accepted: true, Taints: []corev1.Taint{{
			Key: musterv1.UnreachableTaintKey, Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: now.Add(-ago)},
		}}}}
	}
	after, _ := fencing.Plan(300 * time.Second)
	for _, tc := range []struct {
		name    string
		status  *batchv1.JobStatus
		fence   time.Duration
		cluster *musterv1.MemberCluster
		due     bool
	}{
		{name: "fenced, pods gone, no taint: at once", status: fenced(batchv1.JobFailureTarget, batchv1.JobFailed), cluster: healthy, due: true},
		{name: "fenced, pods terminating: not yet", status: fenced(batchv1.JobFailureTarget), cluster: healthy},
		{name: "placed with a fence, tainted past the job's 5 s but within the fence and margin", status: &batchv1.JobStatus{}, fence: after,
			cluster: taintedAt(after + fencing.Margin - fencing.Grace - time.Second)},
		{name: "placed with a fence, tainted past the fence and margin", status: &batchv1.JobStatus{}, fence: after,
			cluster: taintedAt(after + fencing.Margin - fencing.Grace), due: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fj := fleetJob(musterv1.PlacementSingle, 1, 1)
			fj.Spec.Placement.Tolerations = []corev1.Toleration{{Key: musterv1.UnreachableTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](5)}}
			states := []shardState{{shard: shard{cluster: "c2", completions: ptr.To[int32](1), fence: tc.fence}, status: tc.status}}
			due, _ := dueEvictions(fj, states, map[string]*musterv1.MemberCluster{"c2": tc.cluster}, policy, now)
			if got := len(due) == 1; got != tc.due {
				t.Errorf("due %v, want %v", due, tc.due)
			}
		})
	}
}
