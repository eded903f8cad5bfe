package workloadspread_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/fleetjob"
	"github.com/musterhq/muster/internal/testing/envtest"
)

func TestSpreadPlacesOneShardPerSubsetAndCluster(t *testing.T) {
	f := newFixture(t)
	a := f.subset("a", f.c1, num(3))
	a.Patch = &runtime.RawExtension{Raw: []byte(`{"metadata":{"labels":{"tier":"big"}}}`)}
	f.create(f.spread(a, f.subset("b", f.c2, nil)))
	f.create(f.workers(5))

	f.waitShards("a@" + f.c1 + "=3 b@" + f.c2 + "=2")
	jobA, jobB := decodeJob(t, f.work("a", f.c1)), decodeJob(t, f.work("b", f.c2))
	wantA, wantB := fleetjob.JobName(f.workers(5), "a"), fleetjob.JobName(f.workers(5), "b")
	if !strings.HasPrefix(wantA, "workers-a-") || !strings.HasPrefix(wantB, "workers-b-") {
		t.Errorf("subset Job names %s and %s, want workers-a-… and workers-b-…", wantA, wantB)
	}
	if jobA.Name != wantA || jobA.Labels[musterv1.SubsetLabel] != "a" || jobA.Spec.Template.Labels["tier"] != "big" || jobA.Spec.Template.Labels["app"] != "workers" {
		t.Errorf("subset a's Job %s labels %v, pod labels %v: want %s, the subset label, and the patched pod label with the template's", jobA.Name, jobA.Labels, jobA.Spec.Template.Labels, wantA)
	}
	if jobB.Name != wantB || jobB.Spec.Template.Labels["tier"] != "" {
		t.Errorf("subset b's Job %s pod labels %v: want %s without a's patch", jobB.Name, jobB.Spec.Template.Labels, wantB)
	}

	var fj musterv1.FleetJob
	placed := func() (bool, string) {
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: f.ns, Name: "workers"}, &fj); err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(fj.Status.Conditions, musterv1.FleetJobScheduled)
		return c != nil && c.Reason == musterv1.FleetJobReasonPlacedBySpread && len(fj.Status.Clusters) == 2, fmt.Sprintf("%+v", fj.Status)
	}
	envtest.Eventually(t, "the FleetJob placed by the spread", placed)
	if fj.Status.Clusters[0].Subset != "a" || fj.Status.Clusters[1].Subset != "b" {
		t.Errorf("FleetJob shards %+v, want subsets a then b", fj.Status.Clusters)
	}
	// What kubectl get prints: a work queue's two shards each finish at one success.
	if fj.Status.Progress != "0/2" || fj.Status.ClusterCount != 2 {
		t.Errorf("FleetJob progress %q over %d clusters, want 0/2 over 2", fj.Status.Progress, fj.Status.ClusterCount)
	}
	env.ExpectEvent(t, f.ns, "workers", musterv1.FleetJobReasonPlacedBySpread)
	// The WorkloadSpread controller reports the shards once it has seen them.
	ws := f.waitSpreadReplicas(5)
	if len(ws.Status.Subsets) != 2 || ws.Status.Subsets[0].Replicas != 3 || ws.Status.Subsets[0].MissingReplicas != 0 ||
		ws.Status.Subsets[1].Replicas != 2 || ws.Status.Subsets[1].MissingReplicas != -1 {
		t.Errorf("spread status %+v, want a 3 (none missing), b 2 (unbounded)", ws.Status.Subsets)
	}
	if ws.Status.Replicas != 5 || ws.Status.SubsetReplicas != "a 3/3, b 2" {
		t.Errorf("spread summary %d %q, want 5 \"a 3/3, b 2\"", ws.Status.Replicas, ws.Status.SubsetReplicas)
	}
}

func TestSpreadFollowsTheJobsParallelism(t *testing.T) {
	f := newFixture(t)
	f.create(f.spread(f.subset("a", f.c1, num(3)), f.subset("b", f.c2, nil)))
	f.create(f.workers(5))
	f.waitShards("a@" + f.c1 + "=3 b@" + f.c2 + "=2")

	f.scale(2)
	f.waitShards("a@" + f.c1 + "=2")
	f.scale(6)
	f.waitShards("a@" + f.c1 + "=3 b@" + f.c2 + "=3")
	env.ExpectEvent(t, f.ns, "workers", musterv1.FleetJobReasonSpreadChanged)
}

func TestAdaptiveMovesWaitingPodsAndKeepsTheSubsetOffForTheWindow(t *testing.T) {
	f := newFixture(t)
	ws := f.spread(f.subset("a", f.c1, num(3)), f.subset("b", f.c2, nil))
	ws.Spec.ScheduleStrategy = musterv1.ScheduleStrategy{Type: musterv1.ScheduleAdaptive, Adaptive: &musterv1.AdaptiveStrategy{RescheduleCriticalSeconds: ptr.To[int32](30)}}
	f.create(ws)
	f.create(f.workers(5))
	f.waitShards("a@" + f.c1 + "=3 b@" + f.c2 + "=2")

	// One of a's pods runs, two wait for a node.
	since := clock.Now()
	f.report("a", f.c1, waiting(3, 1, since))
	clock.Step(29 * time.Second)
	f.waitReported("a", f.c1, waiting(3, 1, since))
	f.update(func(*musterv1.FleetJob) {})
	f.waitObserved()
	if got := f.shards(); got != "a@"+f.c1+"=3 b@"+f.c2+"=2" {
		t.Fatalf("before rescheduleCriticalSeconds the shards moved: %s", got)
	}

	clock.Step(2 * time.Second)
	f.update(func(*musterv1.FleetJob) {})
	f.waitShards("a@" + f.c1 + "=1 b@" + f.c2 + "=4")
	marked := f.waitSchedulable("a", metav1.ConditionFalse)
	if marked.Reason != musterv1.WorkloadSpreadReasonPodUnschedulable || !marked.LastTransitionTime.Time.Equal(clock.Now()) {
		t.Errorf("subset a %+v, want PodUnschedulable since now", marked)
	}
	env.ExpectEvent(t, f.ns, "spread", musterv1.WorkloadSpreadReasonPodUnschedulable)

	// Within the window new replicas pass a by, even once its pods no longer wait.
	f.report("a", f.c1, batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](1)})
	clock.Step(299 * time.Second)
	f.scale(6)
	f.waitShards("a@" + f.c1 + "=1 b@" + f.c2 + "=5")

	// Then a is tried again: it takes the next new replicas.
	clock.Step(time.Second)
	f.scale(8)
	f.waitShards("a@" + f.c1 + "=3 b@" + f.c2 + "=5")
	if c := f.waitSchedulable("a", metav1.ConditionTrue); !c.LastTransitionTime.Time.Equal(clock.Now()) {
		t.Errorf("subset a Schedulable again since %v, want now (%v)", c.LastTransitionTime, clock.Now())
	}
}

func TestFixedSpreadReportsWaitingPodsButMovesNothing(t *testing.T) {
	f := newFixture(t)
	f.create(f.spread(f.subset("a", f.c1, num(3)), f.subset("b", f.c2, nil)))
	f.create(f.workers(5))
	f.waitShards("a@" + f.c1 + "=3 b@" + f.c2 + "=2")

	f.report("a", f.c1, waiting(3, 0, clock.Now()))
	clock.Step(time.Hour)
	f.update(func(*musterv1.FleetJob) {})
	if c := f.waitSchedulable("a", metav1.ConditionFalse); c.Reason != musterv1.WorkloadSpreadReasonPodUnschedulable {
		t.Errorf("subset a %+v, want PodUnschedulable", c)
	}
	// A round of the FleetJob controller that follows the condition keeps the shards.
	f.update(func(*musterv1.FleetJob) {})
	f.waitObserved()
	if got := f.shards(); got != "a@"+f.c1+"=3 b@"+f.c2+"=2" {
		t.Errorf("a Fixed spread moved pods: %s", got)
	}
}

func TestJobWithCompletionsIsDividedOnceByTheSpread(t *testing.T) {
	f := newFixture(t)
	f.create(f.spread(f.subset("a", f.c1, num(3)), f.subset("b", f.c2, nil)))
	fj := f.workers(5)
	fj.Spec.Template.Spec.Completions = ptr.To[int32](10)
	f.create(fj)
	f.waitShards("a@" + f.c1 + "=3/6 b@" + f.c2 + "=2/4")

	// A shard's completions cannot change, so later scaling leaves the shards alone.
	f.scale(2)
	f.waitObserved()
	if got := f.shards(); got != "a@"+f.c1+"=3/6 b@"+f.c2+"=2/4" {
		t.Errorf("after scaling a job with completions: %s", got)
	}
}

func TestFleetJobPlacedBeforeItsSpreadKeepsItsShards(t *testing.T) {
	f := newFixture(t)
	fj := f.workers(4)
	fj.Spec.Placement.ClusterNames = []string{f.c1}
	f.create(fj)
	f.waitShards("@" + f.c1 + "=4")

	f.create(f.spread(f.subset("a", f.c2, nil)))
	f.update(func(*musterv1.FleetJob) {})
	f.waitObserved()
	if got := f.shards(); got != "@"+f.c1+"=4" {
		t.Errorf("a spread made after placement moved the shards: %s", got)
	}
	if st := f.getSpread().Status; len(st.Subsets) != 0 {
		t.Errorf("the spread reports subsets it does not place: %+v", st.Subsets)
	}
}

func TestFinishedShardFreezesTheSpread(t *testing.T) {
	f := newFixture(t)
	f.create(f.spread(f.subset("a", f.c1, num(3)), f.subset("b", f.c2, nil)))
	f.create(f.workers(5))
	f.waitShards("a@" + f.c1 + "=3 b@" + f.c2 + "=2")

	// A work-queue job is done once a pod succeeded: b's shard completed.
	done := batchv1.JobStatus{Succeeded: 1, Conditions: []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue}, {Type: batchv1.JobComplete, Status: corev1.ConditionTrue},
	}}
	f.report("b", f.c2, done)
	f.waitReported("b", f.c2, done)
	f.scale(8)
	f.waitObserved()
	if got := f.shards(); got != "a@"+f.c1+"=3 b@"+f.c2+"=2" {
		t.Errorf("scaling a job that is winding down: %s", got)
	}
}
