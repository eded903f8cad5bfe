package fleetjob_test

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
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// taint puts taint on cluster, stamped with the test clock's time.
func (f *fixture) taint(cluster string, effect corev1.TaintEffect) {
	f.t.Helper()
	mc := &musterv1.MemberCluster{}
	if err := env.Client.Get(f.t.Context(), client.ObjectKey{Name: cluster}, mc); err != nil {
		f.t.Fatal(err)
	}
	patch := client.MergeFrom(mc.DeepCopy())
	mc.Spec.Taints = append(mc.Spec.Taints, corev1.Taint{Key: musterv1.UnreachableTaintKey, Effect: effect, TimeAdded: &metav1.Time{Time: clock.Now()}})
	if err := env.Client.Patch(f.t.Context(), mc, patch); err != nil {
		f.t.Fatal(err)
	}
}

// single is a Single FleetJob of one pod over c1 and c2, which lands on c1 (the first by
// name when no inventory counts nodes) and tolerates the unreachable taint for seconds
// (nil: no toleration).
func (f *fixture) single(mode musterv1.PlacementMode, seconds *int64) *musterv1.FleetJob {
	fj := f.workers(1)
	fj.Spec.Template.Spec.Completions = ptr.To[int32](1)
	fj.Spec.Placement.Mode = mode
	fj.Spec.Placement.ClusterNames = []string{f.c1, f.c2}
	if seconds != nil {
		fj.Spec.Placement.Tolerations = []corev1.Toleration{{Key: musterv1.UnreachableTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds}}
	}
	f.create(fj)
	return fj
}

func (f *fixture) fleetJob() *musterv1.FleetJob {
	f.t.Helper()
	fj := &musterv1.FleetJob{}
	if err := env.Client.Get(f.t.Context(), client.ObjectKey{Namespace: f.ns, Name: "workers"}, fj); err != nil {
		f.t.Fatal(err)
	}
	return fj
}

// touch changes the FleetJob's labels and waits for a round that saw the change.
func (f *fixture) touch() {
	f.t.Helper()
	fj := f.fleetJob()
	patch := client.MergeFrom(fj.DeepCopy())
	fj.Labels = map[string]string{"touched": fmt.Sprint(time.Now().UnixNano())}
	if err := env.Client.Patch(f.t.Context(), fj, patch); err != nil {
		f.t.Fatal(err)
	}
	rounds.WaitPast(f.t, fj)
}

// stillOn waits for a round of the controller after the test's last change, then fails
// unless the job's one shard is still on cluster; when says at what moment.
func (f *fixture) stillOn(cluster, when string) {
	f.t.Helper()
	f.touch()
	if got := f.shards(); got != "@"+cluster+"=1/1" {
		f.t.Fatalf("%s the shards are %q, want them still on %s", when, got, cluster)
	}
}

// evicted lists the FleetJob's evicted shards as cluster=reason.
func evicted(fj *musterv1.FleetJob) string {
	var out []string
	for _, c := range fj.Status.Clusters {
		if c.Phase == musterv1.JobEvicted && c.Eviction != nil {
			out = append(out, c.ClusterName+"="+c.Eviction.Reason)
		}
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// TestASingleJobMovesOffAnUnreachableCluster after the default 300 s, which the hub
// applies to a FleetJob without a toleration of the taint (admission, not running here,
// would have written it): the shard's Work is withdrawn, the job is placed again on the
// other cluster, the status keeps the evicted shard with its reason, and the events say
// from where to where.
func TestASingleJobMovesOffAnUnreachableCluster(t *testing.T) {
	f := newFixture(t)
	f.single(musterv1.PlacementSingle, nil)
	f.waitShards("@" + f.c1 + "=1/1")
	f.taint(f.c1, corev1.TaintEffectNoExecute)
	clock.Step(299 * time.Second)
	f.stillOn(f.c1, "299s into the default 300s toleration")
	clock.Step(time.Second)
	f.touch()
	f.waitShards("@" + f.c2 + "=1/1")
	f.waitCondition(musterv1.FleetJobScheduled, metav1.ConditionTrue, musterv1.FleetJobReasonPlaced, func(fj *musterv1.FleetJob) bool {
		return evicted(fj) == f.c1+"="+musterv1.FleetJobReasonShardEvicted
	})
	env.ExpectEvent(t, f.ns, "workers", musterv1.FleetJobReasonFailedOver)
	if n := recorder.Count(f.ns, "workers", musterv1.FleetJobReasonFailedOver); n != 2 {
		t.Errorf("%d FailedOver events, want 2: the withdrawal and the new placement", n)
	}
}

// TestAToleratedTaintMovesTheJobOnlyAfterTolerationSeconds, as a pod's toleration of
// node.kubernetes.io/unreachable does.
func TestAToleratedTaintMovesTheJobOnlyAfterTolerationSeconds(t *testing.T) {
	f := newFixture(t)
	f.single(musterv1.PlacementSingle, ptr.To[int64](60))
	f.waitShards("@" + f.c1 + "=1/1")
	f.taint(f.c1, corev1.TaintEffectNoExecute)
	clock.Step(59 * time.Second)
	f.stillOn(f.c1, "59s into a 60s toleration")
	clock.Step(time.Second)
	f.touch()
	f.waitShards("@" + f.c2 + "=1/1")
}

// TestATolerationWithoutSecondsKeepsTheJobForEver, as today.
func TestATolerationWithoutSecondsKeepsTheJobForEver(t *testing.T) {
	f := newFixture(t)
	f.single(musterv1.PlacementSingle, nil)
	f.waitShards("@" + f.c1 + "=1/1")
	fj := f.fleetJob()
	patch := client.MergeFrom(fj.DeepCopy())
	fj.Spec.Placement.Tolerations = []corev1.Toleration{{Key: musterv1.UnreachableTaintKey, Operator: corev1.TolerationOpExists}}
	if err := env.Client.Patch(t.Context(), fj, patch); err != nil {
		t.Fatal(err)
	}
	f.taint(f.c1, corev1.TaintEffectNoExecute)
	clock.Step(24 * time.Hour)
	f.stillOn(f.c1, "a day later")
}

// TestNothingMovesWhenMostSelectedClustersAreUnreachable: the hub takes an outage of
// most of the clusters a placement selects for its own and says so.
func TestNothingMovesWhenMostSelectedClustersAreUnreachable(t *testing.T) {
	f := newFixture(t)
	f.single(musterv1.PlacementSingle, ptr.To[int64](0))
	f.waitShards("@" + f.c1 + "=1/1")
	f.taint(f.c2, corev1.TaintEffectNoExecute)
	f.taint(f.c1, corev1.TaintEffectNoExecute)
	env.ExpectEvent(t, f.ns, "workers", musterv1.FleetJobReasonFailoverHeld)
	// A round after the one that held the eviction holds it again.
	f.stillOn(f.c1, "with both clusters unreachable")
	if n := recorder.Count(f.ns, "workers", musterv1.FleetJobReasonFailedOver); n != 0 {
		t.Errorf("%d FailedOver events", n)
	}
}

// TestTheGateCountsQuietAgentsBeforeTheirTaints: the demo of a hub cut off from every
// member, whose taints come one by one. c1 is tainted and its job leaves at once
// (tolerationSeconds 0), but c2's agent has gone quiet too, untainted yet: two of two
// clusters are down for the gate and nothing moves; once c2 renews again the job moves.
func TestTheGateCountsQuietAgentsBeforeTheirTaints(t *testing.T) {
	f := newFixture(t)
	f.single(musterv1.PlacementSingle, ptr.To[int64](0))
	f.waitShards("@" + f.c1 + "=1/1")
	quietClusters.Store(f.c2, true)
	defer quietClusters.Delete(f.c2)
	heldBefore := envtest.Metric(t, "muster_failovers_held_total", map[string]string{"kind": "FleetJob"})
	f.taint(f.c1, corev1.TaintEffectNoExecute)
	env.ExpectEvent(t, f.ns, "workers", musterv1.FleetJobReasonFailoverHeld)
	f.stillOn(f.c1, "with c1 tainted and c2 quiet")
	if held := envtest.Metric(t, "muster_failovers_held_total", map[string]string{"kind": "FleetJob"}); held <= heldBefore {
		t.Errorf("muster_failovers_held_total{kind=FleetJob} %v, want above %v: the FailoverHeld alert counts on it", held, heldBefore)
	}

	quietClusters.Delete(f.c2)
	f.touch()
	f.waitShards("@" + f.c2 + "=1/1")
}

// TestADuplicateJobDropsTheEvictedCopyAndCompletesOnTheRest: the evicted copy's counts
// leave the job's totals, and the job completes when the copies that remain do.
func TestADuplicateJobDropsTheEvictedCopyAndCompletesOnTheRest(t *testing.T) {
	f := newFixture(t)
	f.single(musterv1.PlacementDuplicate, ptr.To[int64](0))
	f.waitShards("@" + f.c1 + "=1/1 @" + f.c2 + "=1/1")
	running := batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](1)}
	f.agentApplies(f.c2, "", running)
	envtest.Eventually(t, "the copy in c2 counted active", func() (bool, string) {
		fj := f.fleetJob()
		return fj.Status.Active == 1, fmt.Sprint(fj.Status.Active)
	})
	f.taint(f.c2, corev1.TaintEffectNoExecute)
	f.waitShards("@" + f.c1 + "=1/1")
	f.agentApplies(f.c1, "", batchv1.JobStatus{Succeeded: 1, Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}})
	f.waitCondition(musterv1.FleetJobComplete, metav1.ConditionTrue, musterv1.FleetJobReasonShardsCompleted, nil)
	fj := f.fleetJob()
	if fj.Status.Active != 0 || fj.Status.Succeeded != 1 || fj.Status.Progress != "1/1" || evicted(fj) != f.c2+"="+musterv1.FleetJobReasonShardEvicted {
		t.Errorf("status active=%d succeeded=%d progress=%s evicted=%q; want 0, 1, 1/1 and %s", fj.Status.Active, fj.Status.Succeeded, fj.Status.Progress, evicted(fj), f.c2)
	}
	envtest.Eventually(t, "the FailedOver event", func() (bool, string) {
		n := recorder.Count(f.ns, "workers", musterv1.FleetJobReasonFailedOver)
		return n == 1, fmt.Sprint(n)
	})
	// Rounds after the end leave the finished job's status as it was: the evicted copy
	// listed once (a round used to list it once more each time).
	for range 3 {
		f.touch()
	}
	if got := f.fleetJob(); evicted(got) != f.c2+"="+musterv1.FleetJobReasonShardEvicted || got.Status.Succeeded != 1 {
		t.Errorf("after three more rounds: evicted %q, succeeded %d; want %s once and 1", evicted(got), got.Status.Succeeded, f.c2)
	}
}

// TestADividedIndexedJobMovesTheIndexesNotSeenToSucceed: the evicted shard's unfinished
// indexes run on the other cluster as a part of their own, beside that cluster's shard;
// the index the hub saw succeed stays counted once, and the job completes with every
// index counted once.
func TestADividedIndexedJobMovesTheIndexesNotSeenToSucceed(t *testing.T) {
	f := newFixture(t)
	f.dividedIndexed(0)
	// c2 runs fleet indexes 2 and 3; the hub sees its local index 0 (fleet 2) succeed.
	f.agentApplies(f.c2, "", batchv1.JobStatus{Active: 1, Succeeded: 1, CompletedIndexes: "0"})
	envtest.Eventually(t, "c2's success counted", func() (bool, string) {
		got := f.fleetJob().Status.Succeeded
		return got == 1, fmt.Sprint(got)
	})

	f.taint(f.c2, corev1.TaintEffectNoExecute)
	f.waitShards("@" + f.c1 + "=1/1 @" + f.c1 + "=1/2")
	if got := f.partIndexes(f.c1); got != "3" {
		t.Fatalf("the part on %s runs fleet indexes %q, want 3 (2 succeeded on %s)", f.c1, got, f.c2)
	}
	f.waitCondition(musterv1.FleetJobScheduled, metav1.ConditionTrue, musterv1.FleetJobReasonPlaced, func(fj *musterv1.FleetJob) bool {
		return evicted(fj) == f.c2+"="+musterv1.FleetJobReasonShardEvicted && fj.Status.Succeeded == 1
	})

	complete := []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	f.agentAppliesPart(f.c1, false, "", batchv1.JobStatus{Succeeded: 2, CompletedIndexes: "0,1", Conditions: complete})
	f.agentAppliesPart(f.c1, true, "", batchv1.JobStatus{Succeeded: 1, CompletedIndexes: "0", Conditions: complete})
	f.waitCondition(musterv1.FleetJobComplete, metav1.ConditionTrue, musterv1.FleetJobReasonShardsCompleted, nil)
	got := f.fleetJob()
	var done []string
	for _, c := range got.Status.Clusters {
		done = append(done, c.ClusterName+":"+string(c.Phase)+":"+c.CompletedIndexes)
	}
	slices.Sort(done)
	want := []string{f.c1 + ":Complete:0,1", f.c1 + ":Complete:3", f.c2 + ":Evicted:2"}
	if got.Status.Succeeded != 4 || got.Status.Progress != "4/4" || !slices.Equal(done, want) {
		t.Errorf("succeeded %d, progress %s, clusters %v; want 4, 4/4 and %v", got.Status.Succeeded, got.Status.Progress, done, want)
	}
	envtest.Eventually(t, "the FailedOver event naming what moved", func() (bool, string) {
		n := recorder.Count(f.ns, "workers", musterv1.FleetJobReasonFailedOver)
		return n == 1, fmt.Sprint(n)
	})
}

// TestAFencedShardMovesAsSoonAsItsAgentSaysSo: a job whose template asks for no
// replacement before the old pod is gone carries the hub's fence on its shards (the grace
// period, 40 s, and the toleration, 300 s, less the margin, 60 s); an agent that reports
// its shard ended by that fence (cut off past it, then back before the hub moved it) has
// the shard's unfinished part moved at once, without a taint, and the job does not fail.
func TestAFencedShardMovesAsSoonAsItsAgentSaysSo(t *testing.T) {
	f := newFixture(t)
	f.dividedIndexed(300, func(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed) })
	for _, c := range []string{f.c1, f.c2} {
		if got := f.shardJob(c).Annotations[musterv1.FenceAfterAnnotation]; got != "4m40s" {
			t.Errorf("the shard Job on %s has fence %q, want 4m40s", c, got)
		}
	}

	// While its pods terminate the shard stays: its agent has decided, but the pods may
	// still run.
	ending := batchv1.JobCondition{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: musterv1.JobReasonFenced, Message: "cut off for 4m41s"}
	f.agentApplies(f.c2, "", batchv1.JobStatus{Active: 1, Succeeded: 1, CompletedIndexes: "0", Conditions: []batchv1.JobCondition{ending}})
	envtest.Eventually(t, "c2's success counted", func() (bool, string) {
		got := f.fleetJob().Status.Succeeded
		return got == 1, fmt.Sprint(got)
	})
	f.touch()
	if got := f.shards(); got != "@"+f.c1+"=1/2 @"+f.c2+"=1/2" {
		t.Fatalf("with the fenced shard's pods still terminating the shards are %q; want them where they were", got)
	}
	// Its pods gone, its unfinished part moves at once, without a taint; c2, reachable
	// again and rid of them, may take it as well as c1 (here c1, first by name).
	failed := ending
	failed.Type = batchv1.JobFailed
	f.agentApplies(f.c2, "", batchv1.JobStatus{Succeeded: 1, Failed: 1, CompletedIndexes: "0", Conditions: []batchv1.JobCondition{ending, failed}})
	f.waitShards("@" + f.c1 + "=1/1 @" + f.c1 + "=1/2")
	if got := f.partIndexes(f.c1); got != "3" {
		t.Fatalf("the part on %s runs fleet indexes %q, want 3 (2 succeeded on %s)", f.c1, got, f.c2)
	}
	f.waitCondition(musterv1.FleetJobScheduled, metav1.ConditionTrue, musterv1.FleetJobReasonPlaced, func(fj *musterv1.FleetJob) bool {
		return evicted(fj) == f.c2+"="+musterv1.FleetJobReasonShardEvicted
	})
	if got := f.fleetJob(); meta.IsStatusConditionTrue(got.Status.Conditions, musterv1.FleetJobFailed) || got.Status.Succeeded != 1 {
		t.Errorf("after the fenced shard moved the job has conditions %+v and %d succeeded; want it running with c2's success counted", got.Status.Conditions, got.Status.Succeeded)
	}
	var list musterv1.WorkList
	if err := env.Client.List(t.Context(), &list, client.InNamespace(musterv1.MemberNamespace(f.c1)), client.HasLabels{musterv1.PartLabel}); err != nil || len(list.Items) != 1 {
		t.Fatalf("the part's Work on %s: %v", f.c1, err)
	}
	if got := decodeJob(t, &list.Items[0]).Annotations[musterv1.FenceAfterAnnotation]; got != "4m40s" {
		t.Errorf("the part carries fence %q, want the job's 4m40s", got)
	}
}

// shardJob reads the Job of the job's own shard on cluster.
func (f *fixture) shardJob(cluster string) *batchv1.Job {
	f.t.Helper()
	var list musterv1.WorkList
	if err := env.Client.List(f.t.Context(), &list, client.InNamespace(musterv1.MemberNamespace(cluster)), client.MatchingLabels{musterv1.FleetJobNamespaceLabel: f.ns}); err != nil {
		f.t.Fatal(err)
	}
	for i := range list.Items {
		if list.Items[i].Labels[musterv1.PartLabel] == "" {
			return decodeJob(f.t, &list.Items[i])
		}
	}
	f.t.Fatalf("no shard Work on %s", cluster)
	return nil
}

// dividedIndexed creates a Divided Indexed FleetJob of four completions, two pods at a
// time, over c1 and c2, tolerating the unreachable taint for seconds, and waits until
// each cluster runs its half.
func (f *fixture) dividedIndexed(seconds int64, mutate ...func(*musterv1.FleetJob)) {
	f.t.Helper()
	fj := f.workers(2)
	fj.Spec.Template.Spec.Completions = ptr.To[int32](4)
	fj.Spec.Template.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	fj.Spec.Placement.Mode = musterv1.PlacementDivided
	fj.Spec.Placement.ClusterNames = []string{f.c1, f.c2}
	fj.Spec.Placement.Tolerations = []corev1.Toleration{{Key: musterv1.UnreachableTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(seconds)}}
	for _, m := range mutate {
		m(fj)
	}
	f.create(fj)
	f.waitShards("@" + f.c1 + "=1/2 @" + f.c2 + "=1/2")
}

// partIndexes reads the fleet indexes the part of an evicted shard on cluster runs.
func (f *fixture) partIndexes(cluster string) string {
	f.t.Helper()
	var list musterv1.WorkList
	if err := env.Client.List(f.t.Context(), &list, client.InNamespace(musterv1.MemberNamespace(cluster)), client.HasLabels{musterv1.PartLabel}); err != nil || len(list.Items) != 1 {
		f.t.Fatalf("the part's Work on %s: %d found, %v", cluster, len(list.Items), err)
	}
	return decodeJob(f.t, &list.Items[0]).Annotations[musterv1.CompletionIndexesAnnotation]
}

// TestASpreadMovesTheReplicasOffAnUnreachableCluster as its Adaptive strategy moves
// unschedulable ones: the subset pinned to c2 loses its cluster, and its replicas go to
// the next subset in fill order; the status keeps the evicted shard.
func TestASpreadMovesTheReplicasOffAnUnreachableCluster(t *testing.T) {
	f := newFixture(t)
	f.create(f.spread(f.subset("pinned", f.c2, ptr.To(intstr.FromInt32(2))), f.subset("rest", f.c1, nil)))
	fj := f.workers(4)
	fj.Spec.Placement.Tolerations = []corev1.Toleration{{Key: musterv1.UnreachableTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](0)}}
	f.create(fj)
	f.waitShards("pinned@" + f.c2 + "=2 rest@" + f.c1 + "=2")
	f.taint(f.c2, corev1.TaintEffectNoExecute)
	f.waitShards("rest@" + f.c1 + "=4")
	envtest.Eventually(t, "the evicted shard in the status", func() (bool, string) {
		got := evicted(f.fleetJob())
		return got == f.c2+"="+musterv1.FleetJobReasonShardEvicted, got
	})
	env.ExpectEvent(t, f.ns, "workers", musterv1.FleetJobReasonFailedOver)
}

// TestAFenceWaitsForPodsThatTakeLongToStop: pods given 120 s to stop may still run that
// long after their agent fences them, so their shards are fenced sooner (after 3m10s of
// silence rather than 4m40s) and the hub still moves them no sooner than five minutes
// of silence: never a second copy while the first may run.
func TestAFenceWaitsForPodsThatTakeLongToStop(t *testing.T) {
	f := newFixture(t)
	f.dividedIndexed(300, func(fj *musterv1.FleetJob) {
		fj.Spec.Template.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
		fj.Spec.Template.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](120)
	})
	for _, c := range []string{f.c1, f.c2} {
		if got := f.shardJob(c).Annotations[musterv1.FenceAfterAnnotation]; got != "3m10s" {
			t.Errorf("the shard Job on %s has fence %q, want 3m10s (the grace period, 40 s, and the toleration, 300 s, less the margin, 150 s)", c, got)
		}
	}
}
