package fleetjob

import (
	"fmt"
	"slices"
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
	"github.com/musterhq/muster/internal/patch"
)

// spreadOver is a spread with subsets named after their cluster lists: "a:m1" is subset a
// on cluster m1, "b:m1,m2" subset b on m1 and m2; max gives each subset's maxReplicas.
func spreadOver(strategy musterv1.ScheduleStrategyType, max []*intstr.IntOrString, subsets ...string) (*musterv1.WorkloadSpread, []spreadSubset) {
	ws := &musterv1.WorkloadSpread{Spec: musterv1.WorkloadSpreadSpec{ScheduleStrategy: musterv1.ScheduleStrategy{Type: strategy}}}
	if strategy == musterv1.ScheduleAdaptive {
		ws.Spec.ScheduleStrategy.Adaptive = &musterv1.AdaptiveStrategy{RescheduleCriticalSeconds: ptr.To[int32](30)}
	}
	for i, s := range subsets {
		name, _, _ := strings.Cut(s, ":")
		ws.Spec.Subsets = append(ws.Spec.Subsets, musterv1.WorkloadSpreadSubset{Name: name, MaxReplicas: max[i]})
	}
	var subs []spreadSubset
	for i, s := range subsets {
		_, cl, _ := strings.Cut(s, ":")
		sub := spreadSubset{spec: &ws.Spec.Subsets[i], fit: map[string]int{}}
		for _, c := range strings.Split(cl, ",") {
			// "m2!" is a cluster that holds replicas but takes no new ones (unavailable).
			if name, down := strings.CutSuffix(c, "!"); down {
				sub.holding = append(sub.holding, name)
			} else if c != "" {
				sub.clusters = append(sub.clusters, c)
				sub.holding = append(sub.holding, c)
			}
		}
		slices.Sort(sub.holding)
		subs = append(subs, sub)
	}
	return ws, subs
}

func maxes(v ...any) []*intstr.IntOrString {
	var out []*intstr.IntOrString
	for _, x := range v {
		switch x := x.(type) {
		case int:
			out = append(out, ptr.To(intstr.FromInt(x)))
		case string:
			out = append(out, ptr.To(intstr.FromString(x)))
		default:
			out = append(out, nil)
		}
	}
	return out
}

// running is a subset shard with p replicas, all of them ready.
func running(subset, cluster string, p int32) shardState {
	return shardState{
		shard:  shard{cluster: cluster, subset: subset, parallelism: ptr.To(p)},
		status: &batchv1.JobStatus{Active: p, Ready: ptr.To(p)},
	}
}

// waiting is a subset shard with p replicas of which ready run, the others waiting for a
// node since the given time.
func waiting(subset, cluster string, p, ready int32, since time.Time) shardState {
	s := running(subset, cluster, p)
	s.status.Ready = ptr.To(ready)
	s.status.Conditions = []batchv1.JobCondition{{Type: musterv1.JobPodsUnschedulable, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(since), Message: "0/1 nodes are available"}}
	return s
}

func layout(shards []shard) string {
	var parts []string
	for _, s := range shards {
		part := fmt.Sprintf("%s=%d", s.key(), ptr.Deref(s.parallelism, 0))
		if s.completions != nil {
			part += fmt.Sprintf("/%d", *s.completions)
		}
		parts = append(parts, part)
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// storeSchedulable plays the WorkloadSpread controller, which the decision follows: it
// stores on ws each subset's Schedulable condition, decided by the rule that controller
// uses (workloadspread.Schedulable) from the condition stored before and the subset's
// shards, and returns when that controller would look again.
func storeSchedulable(ws *musterv1.WorkloadSpread, subs []spreadSubset, current []shardState, now time.Time) time.Duration {
	strategy := workloadspread.StrategyOf(ws, workloadspread.DefaultUnschedulableWindow)
	var wake time.Duration
	for _, sub := range subs {
		var in []workloadspread.Shard
		for _, s := range current {
			if s.subset == sub.spec.Name {
				in = append(in, workloadspread.Shard{Describe: s.describe(), Status: s.status})
			}
		}
		st := subsetStatus(&ws.Status, sub.spec.Name)
		if st == nil {
			ws.Status.Subsets = append(ws.Status.Subsets, musterv1.WorkloadSpreadSubsetStatus{Name: sub.spec.Name})
			st = &ws.Status.Subsets[len(ws.Status.Subsets)-1]
		}
		c, w := workloadspread.Schedulable(meta.FindStatusCondition(st.Conditions, musterv1.SubsetSchedulable), in, strategy, now)
		meta.SetStatusCondition(&st.Conditions, c)
		wake = patch.Soonest(wake, w)
	}
	return wake
}

func TestDecideSpread(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	job := func(parallelism int32, completions ...int32) *musterv1.FleetJob {
		fj := fleetJob(musterv1.PlacementSingle, parallelism, 0)
		fj.Spec.Template.Spec.Completions = nil
		if len(completions) > 0 {
			fj.Spec.Template.Spec.Completions = ptr.To(completions[0])
		}
		return fj
	}
	fixed := musterv1.ScheduleFixed
	adaptive := musterv1.ScheduleAdaptive
	cases := []struct {
		name     string
		fj       *musterv1.FleetJob
		strategy musterv1.ScheduleStrategyType
		max      []*intstr.IntOrString
		subsets  []string
		current  []shardState
		prev     []metav1.Condition // previous Schedulable condition per subset, if any
		critical *int32             // rescheduleCriticalSeconds when not the default 30
		unstored bool               // the WorkloadSpread controller has not stored its decision yet
		want     string
		remove   []string
		requeue  time.Duration
	}{
		{name: "3 then the rest", fj: job(5), strategy: fixed, max: maxes(3, nil), subsets: []string{"a:m1", "b:m2"}, want: "a/m1=3 b/m2=2"},
		{name: "40% then the rest", fj: job(5), strategy: fixed, max: maxes("40%", nil), subsets: []string{"a:m1", "b:m2"}, want: "a/m1=2 b/m2=3"},
		{name: "a subset over two clusters divides evenly without fit", fj: job(5), strategy: fixed, max: maxes(1, nil), subsets: []string{"a:m1", "b:m1,m2"}, want: "a/m1=1 b/m1=2 b/m2=2"},
		{name: "a subset without clusters is passed over", fj: job(5), strategy: fixed, max: maxes(3, nil), subsets: []string{"a:", "b:m2"}, want: "b/m2=5"},
		{
			name: "scale 5 to 2 removes the last subset's shard", fj: job(2), strategy: fixed, max: maxes(3, nil), subsets: []string{"a:m1", "b:m2"},
			current: []shardState{running("a", "m1", 3), running("b", "m2", 2)}, want: "a/m1=2", remove: []string{"b/m2"},
		},
		{
			name: "scale 2 to 6 fills a first", fj: job(6), strategy: fixed, max: maxes(3, nil), subsets: []string{"a:m1", "b:m2"},
			current: []shardState{running("a", "m1", 2)}, want: "a/m1=3 b/m2=3",
		},
		{
			name: "a subset removed from the spread gives its replicas to the others", fj: job(5), strategy: fixed, max: maxes(nil), subsets: []string{"b:m2"},
			current: []shardState{running("a", "m1", 3), running("b", "m2", 2)}, want: "b/m2=5", remove: []string{"a/m1"},
		},
		{
			name: "an unavailable cluster keeps its replicas and gets no new ones", fj: job(7), strategy: fixed, max: maxes(4, nil), subsets: []string{"a:m1,m3!", "b:m2"},
			current: []shardState{running("a", "m1", 1), running("a", "m3", 2), running("b", "m2", 2)}, want: "a/m1=2 a/m3=2 b/m2=3",
		},
		{
			name: "a subset whose only cluster is unavailable keeps what it holds", fj: job(6), strategy: fixed, max: maxes(4, nil), subsets: []string{"a:m1!", "b:m2"},
			current: []shardState{running("a", "m1", 3), running("b", "m2", 2)}, want: "a/m1=3 b/m2=3",
		},
		{
			name: "scaling down takes from an unavailable cluster like any other", fj: job(3), strategy: fixed, max: maxes(4, nil), subsets: []string{"a:m1!", "b:m2"},
			current: []shardState{running("a", "m1", 3), running("b", "m2", 2)}, want: "a/m1=3", remove: []string{"b/m2"},
		},
		{
			name: "fixed: waiting pods stay", fj: job(5), strategy: fixed, max: maxes(3, nil), subsets: []string{"a:m1", "b:m2"},
			current: []shardState{waiting("a", "m1", 3, 0, now.Add(-time.Hour)), running("b", "m2", 2)}, want: "a/m1=3 b/m2=2",
		},
		{
			name: "adaptive: waiting less than critical stays, requeued at critical", fj: job(5), strategy: adaptive, max: maxes(3, nil), subsets: []string{"a:m1", "b:m2"},
			current: []shardState{waiting("a", "m1", 3, 0, now.Add(-10*time.Second)), running("b", "m2", 2)}, want: "a/m1=3 b/m2=2", requeue: 20 * time.Second,
		},
		{
			name: "adaptive: past critical the waiting pods move on", fj: job(5), strategy: adaptive, max: maxes(3, nil), subsets: []string{"a:m1", "b:m2"},
			current: []shardState{waiting("a", "m1", 3, 0, now.Add(-31*time.Second)), running("b", "m2", 2)}, want: "b/m2=5", remove: []string{"a/m1"}, requeue: workloadspread.DefaultUnschedulableWindow,
		},
		{
			name: "adaptive: past critical nothing moves before the spread stores it", fj: job(5), strategy: adaptive, max: maxes(3, nil), subsets: []string{"a:m1", "b:m2"},
			current:  []shardState{waiting("a", "m1", 3, 0, now.Add(-31*time.Second)), running("b", "m2", 2)},
			prev:     []metav1.Condition{{Status: metav1.ConditionTrue, Reason: musterv1.ReasonSchedulable, LastTransitionTime: metav1.NewTime(now.Add(-time.Minute))}},
			unstored: true, want: "a/m1=3 b/m2=2",
		},
		{
			name: "adaptive: running pods of the subset stay", fj: job(5), strategy: adaptive, max: maxes(3, nil), subsets: []string{"a:m1", "b:m2"},
			current: []shardState{waiting("a", "m1", 3, 1, now.Add(-31*time.Second)), running("b", "m2", 2)}, want: "a/m1=1 b/m2=4", requeue: workloadspread.DefaultUnschedulableWindow,
		},
		{
			name: "adaptive: within the window new replicas skip the subset", fj: job(6), strategy: adaptive, max: maxes(3, nil), subsets: []string{"a:m1", "b:m2"},
			current: []shardState{running("b", "m2", 5)},
			prev:    []metav1.Condition{{Status: metav1.ConditionFalse, Reason: musterv1.WorkloadSpreadReasonPodUnschedulable, LastTransitionTime: metav1.NewTime(now.Add(-100 * time.Second))}},
			want:    "b/m2=6", requeue: 200 * time.Second,
		},
		{
			name: "adaptive: after the window the subset takes new replicas again", fj: job(6), strategy: adaptive, max: maxes(3, nil), subsets: []string{"a:m1", "b:m2"},
			current: []shardState{running("b", "m2", 5)},
			prev:    []metav1.Condition{{Status: metav1.ConditionFalse, Reason: musterv1.WorkloadSpreadReasonPodUnschedulable, LastTransitionTime: metav1.NewTime(now.Add(-301 * time.Second))}},
			want:    "a/m1=1 b/m2=5",
		},
		{
			name: "adaptive: the stored window's end counts before the spread stores True", fj: job(6), strategy: adaptive, max: maxes(3, nil), subsets: []string{"a:m1", "b:m2"},
			current:  []shardState{running("b", "m2", 5)},
			prev:     []metav1.Condition{{Status: metav1.ConditionFalse, Reason: musterv1.WorkloadSpreadReasonPodUnschedulable, LastTransitionTime: metav1.NewTime(now.Add(-301 * time.Second))}},
			unstored: true, want: "a/m1=1 b/m2=5",
		},
		{
			name: "adaptive with rescheduleCriticalSeconds 0 moves nothing, as Fixed", fj: job(5), strategy: adaptive, max: maxes(3, nil), subsets: []string{"a:m1", "b:m2"},
			critical: ptr.To[int32](0),
			current:  []shardState{waiting("a", "m1", 3, 0, now.Add(-time.Hour)), running("b", "m2", 2)}, want: "a/m1=3 b/m2=2",
		},
		// Kruise leaves replicas beyond every cap outside any subset; a FleetJob's replica
		// needs a cluster, so they go to the last subset (README, differences).
		{name: "one bounded subset takes what no cap admits", fj: job(6), strategy: fixed, max: maxes(2), subsets: []string{"a:m1"}, want: "a/m1=6"},
		{name: "an unbounded subset before the last takes every replica", fj: job(6), strategy: fixed, max: maxes(nil, 2), subsets: []string{"a:m1", "b:m2"}, want: "a/m1=6"},
		{name: "an unbounded subset that no cluster takes passes its replicas on", fj: job(6), strategy: fixed, max: maxes(nil, nil), subsets: []string{"a:m1!", "b:m2"}, want: "b/m2=6"},
		{name: "completions follow the replicas on first placement", fj: job(5, 10), strategy: fixed, max: maxes(3, nil), subsets: []string{"a:m1", "b:m2"}, want: "a/m1=3/6 b/m2=2/4"},
		{
			name: "with completions the shards stay once placed", fj: job(2, 10), strategy: adaptive, max: maxes(3, nil), subsets: []string{"a:m1", "b:m2"},
			current: []shardState{waiting("a", "m1", 3, 0, now.Add(-time.Hour)), running("b", "m2", 2)}, want: "a/m1=3 b/m2=2", requeue: workloadspread.DefaultUnschedulableWindow,
		},
		{
			name: "once a shard finished nothing moves", fj: job(6), strategy: fixed, max: maxes(3, nil), subsets: []string{"a:m1", "b:m2"},
			current: []shardState{running("a", "m1", 3), {shard: shard{cluster: "m2", subset: "b", parallelism: ptr.To[int32](2)}, status: jobStatus(0, 1, 0, "", batchv1.JobComplete)}},
			want:    "a/m1=3 b/m2=2",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws, subs := spreadOver(tc.strategy, tc.max, tc.subsets...)
			if tc.critical != nil {
				ws.Spec.ScheduleStrategy.Adaptive.RescheduleCriticalSeconds = tc.critical
			}
			for i, c := range tc.prev {
				c.Type = musterv1.SubsetSchedulable
				ws.Status.Subsets = append(ws.Status.Subsets, musterv1.WorkloadSpreadSubsetStatus{Name: subs[i].spec.Name, Conditions: []metav1.Condition{c}})
			}
			var wake time.Duration
			if !tc.unstored {
				wake = storeSchedulable(ws, subs, tc.current, now)
			}
			d := decideSpread(tc.fj, ws, subs, tc.current, DefaultUnschedulableWindow, now)
			if got := layout(d.shards); got != tc.want {
				t.Errorf("shards %q, want %q", got, tc.want)
			}
			if !slices.Equal(d.remove, tc.remove) {
				t.Errorf("remove %v, want %v", d.remove, tc.remove)
			}
			if wake != tc.requeue {
				t.Errorf("the WorkloadSpread controller looks again in %v, want %v", wake, tc.requeue)
			}
		})
	}
}

func TestSpreadChanges(t *testing.T) {
	got := spreadChanges([]shardState{running("a", "m1", 3), running("b", "m2", 2)}, []shard{{cluster: "m2", subset: "b", parallelism: ptr.To[int32](5)}})
	if want := "subset a in cluster m1 3→0; subset b in cluster m2 2→5"; got != want {
		t.Errorf("spreadChanges = %q, want %q", got, want)
	}
}
