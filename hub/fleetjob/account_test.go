package fleetjob

import (
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// placed records a placement of n decisions (and copies, for Duplicate) on fj's status.
func placed(decisions, copies int32) func(*musterv1.FleetJob) {
	return func(fj *musterv1.FleetJob) {
		fj.Status.Placement = &musterv1.FleetJobPlacementRecord{Decisions: decisions, Copies: copies}
		meta.SetStatusCondition(&fj.Status.Conditions, metav1.Condition{Type: musterv1.FleetJobScheduled, Status: metav1.ConditionTrue, Reason: musterv1.FleetJobReasonPlaced})
	}
}

func rangeOn(cluster string, start, end int32) shardState {
	return shardState{shard: shard{cluster: cluster, parallelism: ptr.To(end - start), completions: ptr.To(end - start), indexes: &musterv1.IndexRange{Start: start, End: end}}}
}

func completionsOn(cluster string, n int32) shardState {
	return shardState{shard: shard{cluster: cluster, parallelism: ptr.To(n), completions: ptr.To(n)}}
}

// TestShortfallIsWhatTheRecordAsksAndNoShardAccountsFor: a job whose recorded placement
// is not all in force (a Work create refused, a crash between creates, a member removed
// with its Works) has exactly the missing share left to place, and none when its shards
// and what they carried account for it.
func TestShortfallIsWhatTheRecordAsksAndNoShardAccountsFor(t *testing.T) {
	cases := []struct {
		name   string
		fj     *musterv1.FleetJob
		states []shardState
		// want is "none", "copies=N" or the rest as describeParts would show its shard on c9.
		want string
	}{
		{
			name: "not placed yet: nothing is short, the first placement places it",
			fj:   fleetJob(musterv1.PlacementDivided, 6, 6, indexedJob),
			want: "none",
		},
		{
			name:   "a Divided Indexed job with one shard refused misses exactly that shard's indexes",
			fj:     fleetJob(musterv1.PlacementDivided, 6, 6, indexedJob, placed(1, 0)),
			states: []shardState{rangeOn("c1", 0, 3)},
			want:   "c9 p=03 c=03 {3-5}",
		},
		{
			name:   "every index in force: nothing is short",
			fj:     fleetJob(musterv1.PlacementDivided, 6, 6, indexedJob, placed(1, 0)),
			states: []shardState{rangeOn("c1", 0, 3), rangeOn("c2", 3, 6)},
			want:   "none",
		},
		{
			name: "indexes carried from an evicted shard are accounted for, not run again",
			fj:   fleetJob(musterv1.PlacementDivided, 6, 6, indexedJob, placed(1, 0)),
			states: []shardState{
				rangeOn("c1", 3, 6),
				{shard: shard{cluster: "c2", part: "p", parallelism: ptr.To[int32](1), completions: ptr.To[int32](1), fleetIndexes: "2", carried: 2, carriedIndexes: "0,1"}},
			},
			want: "none",
		},
		{
			name: "a removed member's part is missing, what another part carried is not",
			fj:   fleetJob(musterv1.PlacementDivided, 6, 6, indexedJob, placed(2, 0)),
			states: []shardState{
				{shard: shard{cluster: "c2", part: "p", parallelism: ptr.To[int32](1), completions: ptr.To[int32](1), fleetIndexes: "2", carried: 2, carriedIndexes: "0,1"}},
			},
			want: "c9 p=03 c=03 {3-5}",
		},
		{
			name:   "a NonIndexed Divided job misses the completions no shard runs or carried",
			fj:     fleetJob(musterv1.PlacementDivided, 4, 10, placed(1, 0)),
			states: []shardState{completionsOn("c1", 5), {shard: shard{cluster: "c2", part: "p", parallelism: ptr.To[int32](1), completions: ptr.To[int32](2), carried: 1}}},
			want:   "c9 p=02 c=02",
		},
		{
			name: "a Single job whose shard is gone misses it whole",
			fj:   fleetJob(musterv1.PlacementSingle, 2, 4, placed(1, 0)),
			want: "copies=1",
		},
		{
			name:   "a Duplicate job misses the copies its record keeps and no cluster holds",
			fj:     fleetJob(musterv1.PlacementDuplicate, 2, 4, placed(1, 3)),
			states: []shardState{completionsOn("c1", 4)},
			want:   "copies=2",
		},
		{
			name: "a finished job's counts are final: nothing is short",
			fj: fleetJob(musterv1.PlacementDivided, 6, 6, indexedJob, placed(1, 0), func(fj *musterv1.FleetJob) {
				meta.SetStatusCondition(&fj.Status.Conditions, metav1.Condition{Type: musterv1.FleetJobComplete, Status: metav1.ConditionTrue, Reason: "ShardsCompleted"})
			}),
			states: []shardState{rangeOn("c1", 0, 3)},
			want:   "none",
		},
		{
			name:   "a Divided job without completions misses nothing while a shard runs",
			fj:     fleetJob(musterv1.PlacementDivided, 4, 0, workQueue, placed(1, 0)),
			states: []shardState{{shard: shard{cluster: "c1", parallelism: ptr.To[int32](2)}}},
			want:   "none",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			short, ok := shortfallOf(tc.fj, tc.states)
			got := "none"
			switch {
			case ok && short.copies > 0:
				got = fmt.Sprintf("copies=%d", short.copies)
			case ok:
				got = describeParts(planShortfall(tc.fj, short, 2, tc.states, []string{"c9"}, nil))
			}
			if got != tc.want {
				t.Errorf("shortfall %s, want %s", got, tc.want)
			}
		})
	}
}

// TestShortfallPlacementNamesItsOwnShards: the shards of a rest placed again take names
// of their decision's own, never a Work name an earlier decision (or an eviction's part)
// holds; a Duplicate job's missing copies go to eligible clusters that hold none.
func TestShortfallPlacementNamesItsOwnShards(t *testing.T) {
	fj := fleetJob(musterv1.PlacementDivided, 6, 6, indexedJob, placed(1, 0))
	states := []shardState{rangeOn("c1", 0, 3)}
	short, _ := shortfallOf(fj, states)
	second := planShortfall(fj, short, 2, states, []string{"c1", "c2"}, nil)
	third := planShortfall(fj, short, 3, states, []string{"c1", "c2"}, nil)
	seen := map[string]bool{workName(fj, states[0].shard): true}
	for _, s := range append(second, third...) {
		if s.part == "" || s.replaces != "" || s.carried != 0 {
			t.Errorf("rest shard %+v: want a part of its own, replacing nothing, carrying nothing", s)
		}
		if n := workName(fj, s) + "@" + s.cluster; seen[n] {
			t.Errorf("Work name %s taken twice", n)
		} else {
			seen[n] = true
		}
	}
	if got := describeParts(second); got != "c1 p=02 c=02 {3,4}; c2 p=01 c=01 {5}" {
		t.Errorf("rest divided as %s, want indexes 3-5 split between c1 and c2", got)
	}

	dup := fleetJob(musterv1.PlacementDuplicate, 1, 1, placed(1, 3))
	held := []shardState{completionsOn("c2", 1)}
	short, _ = shortfallOf(dup, held)
	if got := describeParts(planShortfall(dup, short, 2, held, []string{"c1", "c2", "c3", "c4"}, nil)); got != "c1 p=01 c=01; c3 p=01 c=01" {
		t.Errorf("Duplicate copies placed on %s, want c1 and c3 (the first clusters without one)", got)
	}
	if _, ok := shortfallOf(fleetJob(musterv1.PlacementSingle, 1, 1, placed(1, 0)), nil); !ok {
		t.Error("a Single job with no shard in force: want its whole share missing")
	}
}

// TestAJobShortOfItsPlacementIsNotComplete: the demo fleet's job Complete with three of
// its six indexes run. Every shard in force finished, but the record says more was
// placed: the job stays unfinished until the rest runs.
func TestAJobShortOfItsPlacementIsNotComplete(t *testing.T) {
	fj := fleetJob(musterv1.PlacementDivided, 6, 6, indexedJob, placed(1, 0))
	done := rangeOn("c1", 0, 3)
	done.status = &batchv1.JobStatus{Succeeded: 3, CompletedIndexes: "0-2", Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}
	_, short := shortfallOf(fj, []shardState{done})
	status, _ := summarize(fj, []shardState{done}, short, time.Now())
	if !short || finishedFleet(&status) || status.Succeeded != 3 {
		t.Errorf("short %v, finished %v, succeeded %d; want short, unfinished, 3", short, finishedFleet(&status), status.Succeeded)
	}
}
