package workloadspread

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/api/workloadspread"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// spreadOf is a spread of the given strategy with subsets named by names, capped by max
// (nil: unbounded), targeting a FleetJob of the given parallelism.
func spreadOf(strategy musterv1.ScheduleStrategyType, parallelism int32, names []string, max ...*intstr.IntOrString) (*musterv1.WorkloadSpread, *musterv1.FleetJob) {
	ws := &musterv1.WorkloadSpread{Spec: musterv1.WorkloadSpreadSpec{ScheduleStrategy: musterv1.ScheduleStrategy{Type: strategy}}}
	ws.Generation = 2
	if strategy == musterv1.ScheduleAdaptive {
		ws.Spec.ScheduleStrategy.Adaptive = &musterv1.AdaptiveStrategy{RescheduleCriticalSeconds: ptr.To[int32](30)}
	}
	for i, n := range names {
		ws.Spec.Subsets = append(ws.Spec.Subsets, musterv1.WorkloadSpreadSubset{Name: n, MaxReplicas: max[i]})
	}
	fj := &musterv1.FleetJob{}
	fj.Spec.Template.Spec.Parallelism = ptr.To(parallelism)
	return ws, fj
}

func running(subset, cluster string, p int32) shard {
	return shard{subset: subset, cluster: cluster, parallelism: p, status: &batchv1.JobStatus{Active: p, Ready: ptr.To(p)}}
}

// waiting is a shard of p pods, none running, waiting for a node since the given time.
func waiting(subset, cluster string, p int32, since time.Time) shard {
	s := running(subset, cluster, p)
	s.status.Ready = ptr.To[int32](0)
	s.status.Conditions = []batchv1.JobCondition{{Type: musterv1.JobPodsUnschedulable, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(since), Message: "0/1 nodes are available"}}
	return s
}

func decideFor(ws *musterv1.WorkloadSpread, fj *musterv1.FleetJob, shards ...shard) decision {
	return decide(ws, &snapshot{fj: fj, shards: shards}, workloadspread.StrategyOf(ws, workloadspread.DefaultUnschedulableWindow), now)
}

// TestSpreadStatus follows an Adaptive spread through a move: the round that sees a's
// pods waiting past rescheduleCriticalSeconds marks a, and the round after the FleetJob
// controller moved them reports a empty but still marked, b holding the pods.
func TestSpreadStatus(t *testing.T) {
	ws, fj := spreadOf(musterv1.ScheduleAdaptive, 5, []string{"a", "b"}, ptr.To(intstr.FromInt32(3)), nil)
	d := decideFor(ws, fj, waiting("a", "m1", 3, now.Add(-time.Minute)))
	if c := meta.FindStatusCondition(d.status.Subsets[0].Conditions, musterv1.SubsetSchedulable); c == nil || c.Status != metav1.ConditionFalse || c.Reason != musterv1.WorkloadSpreadReasonPodUnschedulable || !c.LastTransitionTime.Time.Equal(now) {
		t.Errorf("subset a Schedulable %+v, want False/PodUnschedulable since now", c)
	}
	if d.requeue != workloadspread.DefaultUnschedulableWindow || d.status.ObservedGeneration != 2 {
		t.Errorf("requeue %v, observedGeneration %d; want the window, 2", d.requeue, d.status.ObservedGeneration)
	}

	ws.Status = d.status
	d = decideFor(ws, fj, running("b", "m1", 3), running("b", "m2", 2))
	a, b := d.status.Subsets[0], d.status.Subsets[1]
	if a.Name != "a" || a.Replicas != 0 || a.MissingReplicas != 3 || len(a.Clusters) != 0 {
		t.Errorf("subset a: %+v, want 0 replicas, 3 missing, no cluster", a)
	}
	if c := meta.FindStatusCondition(a.Conditions, musterv1.SubsetSchedulable); c == nil || c.Status != metav1.ConditionFalse || c.Reason != musterv1.WorkloadSpreadReasonPodUnschedulable || !c.LastTransitionTime.Time.Equal(now) {
		t.Errorf("subset a Schedulable %+v, want False/PodUnschedulable since the mark", c)
	}
	if b.Replicas != 5 || b.MissingReplicas != -1 || len(b.Clusters) != 2 || b.Clusters[0].Replicas+b.Clusters[1].Replicas != 5 {
		t.Errorf("subset b: %+v, want 5 replicas over m1 and m2, unbounded", b)
	}
	if c := meta.FindStatusCondition(b.Conditions, musterv1.SubsetSchedulable); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("subset b Schedulable %+v, want True", c)
	}
	if d.status.Replicas != 5 || d.status.SubsetReplicas != "a 0/3, b 5" {
		t.Errorf("summary %d %q, want 5 \"a 0/3, b 5\"", d.status.Replicas, d.status.SubsetReplicas)
	}
}

// TestSpreadStatusShowsReplicasPastTheLastCap: the replicas no cap admits run in the last
// subset, and its status says so instead of hiding them.
func TestSpreadStatusShowsReplicasPastTheLastCap(t *testing.T) {
	ws, fj := spreadOf(musterv1.ScheduleFixed, 6, []string{"a"}, ptr.To(intstr.FromInt32(2)))
	d := decideFor(ws, fj, running("a", "m1", 6))
	a := d.status.Subsets[0]
	if a.Replicas != 6 || a.MissingReplicas != 0 || d.status.Replicas != 6 || d.status.SubsetReplicas != "a 6/2" {
		t.Errorf("status %+v, want subset a with 6 replicas, none missing, summary \"a 6/2\"", d.status)
	}
}

// manyShards are n running shards of subset a, in clusters m00, m01, ..., where mNN runs
// NN+1 replicas.
func manyShards(n int) []shard {
	out := make([]shard, n)
	for i := range out {
		out[i] = running("a", fmt.Sprintf("m%02d", i), int32(i+1))
	}
	return out
}

func TestSubsetCounts(t *testing.T) {
	cases := []struct {
		name        string
		parallelism int32
		max         *intstr.IntOrString
		shards      []shard
		replicas    int32
		missing     int32
		clusters    string
	}{
		{"no shard yet", 5, ptr.To(intstr.FromInt32(3)), nil, 0, 3, ""},
		{"a percent of the parallelism, rounded up", 5, ptr.To(intstr.FromString("40%")), []shard{running("a", "m1", 1)}, 1, 1, "m1=1"},
		{"clusters in name order, another subset's shards left out", 9, nil, []shard{running("a", "m2", 2), running("b", "m1", 4), running("a", "m1", 3)}, 5, -1, "m1=3 m2=2"},
		{"a shard of no replicas names no cluster", 0, nil, []shard{running("a", "m1", 0)}, 0, -1, ""},
		{"past the listed maximum, the largest shares in name order", 300, nil, manyShards(25), 325, -1,
			"m05=6 m06=7 m07=8 m08=9 m09=10 m10=11 m11=12 m12=13 m13=14 m14=15 m15=16 m16=17 m17=18 m18=19 m19=20 m20=21 m21=22 m22=23 m23=24 m24=25 (5 more)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws, fj := spreadOf(musterv1.ScheduleFixed, tc.parallelism, []string{"a"}, tc.max)
			a := decideFor(ws, fj, tc.shards...).status.Subsets[0]
			var clusters []string
			for _, c := range a.Clusters {
				clusters = append(clusters, fmt.Sprintf("%s=%d", c.ClusterName, c.Replicas))
			}
			if a.ClustersOmitted > 0 {
				clusters = append(clusters, fmt.Sprintf("(%d more)", a.ClustersOmitted))
			}
			if a.Replicas != tc.replicas || a.MissingReplicas != tc.missing || strings.Join(clusters, " ") != tc.clusters {
				t.Errorf("subset a: %d replicas, %d missing, clusters %q; want %d, %d, %q", a.Replicas, a.MissingReplicas, strings.Join(clusters, " "), tc.replicas, tc.missing, tc.clusters)
			}
		})
	}
}

func TestPlaces(t *testing.T) {
	job := func(conds ...metav1.Condition) *musterv1.FleetJob {
		return &musterv1.FleetJob{Status: musterv1.FleetJobStatus{Conditions: conds}}
	}
	cond := func(t, reason string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason}
	}
	cases := []struct {
		name   string
		fj     *musterv1.FleetJob
		shards []shard
		want   bool
	}{
		{"no target", nil, nil, false},
		{"a new target", job(), nil, true},
		{"a target the spread placed", job(cond(musterv1.FleetJobScheduled, musterv1.FleetJobReasonPlacedBySpread)), []shard{running("a", "m1", 1)}, true},
		{"shards placed without a spread", job(), []shard{running("", "m1", 1)}, false},
		{"placed without a spread, its Works not seen yet", job(cond(musterv1.FleetJobScheduled, musterv1.FleetJobReasonPlaced)), nil, false},
		{"complete", job(cond(musterv1.FleetJobComplete, musterv1.FleetJobReasonShardsCompleted)), []shard{running("a", "m1", 1)}, false},
		{"failed", job(cond(musterv1.FleetJobFailed, musterv1.FleetJobReasonShardFailed)), []shard{running("a", "m1", 1)}, false},
	}
	for _, tc := range cases {
		if got := (&snapshot{fj: tc.fj, shards: tc.shards}).places(); got != tc.want {
			t.Errorf("%s: places = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSchedulableNews(t *testing.T) {
	status := func(s metav1.ConditionStatus, reason string) *musterv1.WorkloadSpreadStatus {
		return &musterv1.WorkloadSpreadStatus{Subsets: []musterv1.WorkloadSpreadSubsetStatus{{
			Name: "a", Conditions: []metav1.Condition{{Type: musterv1.SubsetSchedulable, Status: s, Reason: reason, Message: "pods waited"}},
		}}}
	}
	marked := status(metav1.ConditionFalse, musterv1.WorkloadSpreadReasonPodUnschedulable)
	ok := status(metav1.ConditionTrue, musterv1.ReasonSchedulable)
	cases := []struct {
		name          string
		before, after *musterv1.WorkloadSpreadStatus
		want          string
	}{
		{"first report, schedulable", &musterv1.WorkloadSpreadStatus{}, ok, ""},
		{"first report, marked", &musterv1.WorkloadSpreadStatus{}, marked, "Warning PodUnschedulable subset a: pods waited"},
		{"marked", ok, marked, "Warning PodUnschedulable subset a: pods waited"},
		{"still marked", marked, marked, ""},
		{"tried again", marked, ok, "Normal Schedulable subset a is tried again"},
		{"still schedulable", ok, ok, ""},
	}
	for _, tc := range cases {
		var got []string
		for _, e := range schedulableNews(tc.before, *tc.after) {
			got = append(got, e.eventType+" "+e.reason+" "+e.note)
		}
		if strings.Join(got, "; ") != tc.want {
			t.Errorf("%s: news %q, want %q", tc.name, got, tc.want)
		}
	}
}
