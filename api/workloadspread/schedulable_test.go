package workloadspread

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestStrategyOf(t *testing.T) {
	adaptive := func(critical *int32) *musterv1.WorkloadSpread {
		ws := &musterv1.WorkloadSpread{}
		ws.Spec.ScheduleStrategy.Type = musterv1.ScheduleAdaptive
		if critical != nil {
			ws.Spec.ScheduleStrategy.Adaptive = &musterv1.AdaptiveStrategy{RescheduleCriticalSeconds: critical}
		}
		return ws
	}
	cases := []struct {
		name string
		ws   *musterv1.WorkloadSpread
		want Strategy
	}{
		{"fixed", &musterv1.WorkloadSpread{}, Strategy{Critical: 30 * time.Second, Window: time.Minute}},
		{"adaptive defaults to 30s", adaptive(nil), Strategy{Adaptive: true, Critical: 30 * time.Second, Window: time.Minute}},
		{"adaptive 10s", adaptive(ptr.To[int32](10)), Strategy{Adaptive: true, Critical: 10 * time.Second, Window: time.Minute}},
		{"adaptive 0 acts as fixed", adaptive(ptr.To[int32](0)), Strategy{Window: time.Minute}},
	}
	for _, tc := range cases {
		if got := StrategyOf(tc.ws, time.Minute); got != tc.want {
			t.Errorf("%s: StrategyOf = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestSchedulable(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	waitingSince := func(since time.Time) Shard {
		return Shard{Describe: "subset a in cluster m1", Status: &batchv1.JobStatus{Conditions: []batchv1.JobCondition{{
			Type: musterv1.JobPodsUnschedulable, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(since), Message: "0/1 nodes are available",
		}}}}
	}
	running := Shard{Describe: "subset a in cluster m2", Status: &batchv1.JobStatus{Active: 1}}
	falseSince := func(t time.Time) *metav1.Condition {
		return &metav1.Condition{Type: musterv1.SubsetSchedulable, Status: metav1.ConditionFalse, Reason: musterv1.WorkloadSpreadReasonPodUnschedulable, LastTransitionTime: metav1.NewTime(t)}
	}
	trueSince := &metav1.Condition{Type: musterv1.SubsetSchedulable, Status: metav1.ConditionTrue, Reason: musterv1.ReasonSchedulable, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}
	fixed := Strategy{Critical: 30 * time.Second, Window: DefaultUnschedulableWindow}
	adaptive := Strategy{Adaptive: true, Critical: 30 * time.Second, Window: DefaultUnschedulableWindow}
	cases := []struct {
		name     string
		prev     *metav1.Condition
		shards   []Shard
		strategy Strategy
		status   metav1.ConditionStatus
		since    time.Time
		message  string // a part of the message
		wake     time.Duration
	}{
		{name: "no pod waits", shards: []Shard{running}, strategy: adaptive, status: metav1.ConditionTrue, since: now},
		{name: "true keeps its time", prev: trueSince, shards: []Shard{running}, strategy: adaptive, status: metav1.ConditionTrue, since: now.Add(-time.Hour)},
		{
			name: "fixed reports the wait from when it began", shards: []Shard{running, waitingSince(now.Add(-time.Hour))}, strategy: fixed,
			status: metav1.ConditionFalse, since: now.Add(-time.Hour), message: "subset a in cluster m1: 0/1 nodes are available",
		},
		{name: "adaptive below critical wakes at critical", shards: []Shard{waitingSince(now.Add(-10 * time.Second))}, strategy: adaptive, status: metav1.ConditionTrue, since: now, wake: 20 * time.Second},
		{
			name: "adaptive past critical is False for the window", shards: []Shard{waitingSince(now.Add(-31 * time.Second))}, strategy: adaptive,
			status: metav1.ConditionFalse, since: now, message: "new pods go to later subsets until 2026-11-22T12:05:00Z", wake: DefaultUnschedulableWindow,
		},
		{name: "adaptive holds False within the window", prev: falseSince(now.Add(-100 * time.Second)), strategy: adaptive, status: metav1.ConditionFalse, since: now.Add(-100 * time.Second), wake: 200 * time.Second},
		{name: "adaptive tries the subset again after the window", prev: falseSince(now.Add(-301 * time.Second)), strategy: adaptive, status: metav1.ConditionTrue, since: now},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, wake := Schedulable(tc.prev, tc.shards, tc.strategy, now)
			if c.Type != musterv1.SubsetSchedulable || c.Status != tc.status || !c.LastTransitionTime.Time.Equal(tc.since) || !strings.Contains(c.Message, tc.message) {
				t.Errorf("condition %+v, want %s since %v with %q", c, tc.status, tc.since, tc.message)
			}
			if wake != tc.wake {
				t.Errorf("wake %v, want %v", wake, tc.wake)
			}
		})
	}
}

// TestAMarkWakesAtTheStoredWindowsEnd: a subset marked at a fraction of a second is
// stored at the whole second, and its controller looks again when that stored window
// ends, not the fraction later, when the FleetJob controller would already take the
// subset back.
func TestAMarkWakesAtTheStoredWindowsEnd(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 700_000_000, time.UTC)
	adaptive := Strategy{Adaptive: true, Critical: 30 * time.Second, Window: DefaultUnschedulableWindow}
	waiting := []Shard{{Describe: "a", Status: &batchv1.JobStatus{Conditions: []batchv1.JobCondition{{
		Type: musterv1.JobPodsUnschedulable, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Minute)),
	}}}}}
	c, wake := Schedulable(nil, waiting, adaptive, now)
	if c.Status != metav1.ConditionFalse {
		t.Fatalf("condition %+v, want False", c)
	}
	if want := DefaultUnschedulableWindow - 700*time.Millisecond; wake != want {
		t.Errorf("wake %v, want %v (the window from the stored second)", wake, want)
	}
}

func TestSubsetSummary(t *testing.T) {
	got := SubsetSummary([]musterv1.WorkloadSpreadSubsetStatus{
		{Name: "gpu", Replicas: 4, MissingReplicas: 0},
		{Name: "spot", Replicas: 1, MissingReplicas: 2},
		{Name: "cpu", Replicas: 0, MissingReplicas: -1},
	}, []int32{4, 3, -1})
	if want := "gpu 4/4, spot 1/3, cpu 0"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	// A last subset past its cap shows the cap, not its replicas.
	got = SubsetSummary([]musterv1.WorkloadSpreadSubsetStatus{{Name: "a", Replicas: 6, MissingReplicas: 0}}, []int32{2})
	if want := "a 6/2"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}
