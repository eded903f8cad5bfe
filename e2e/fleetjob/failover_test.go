//go:build e2e

package fleetjob

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/indexset"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

// toleration is how long the failover jobs tolerate an unreachable cluster.
const toleration = 5 * time.Second

// failoverWork is a Single FleetJob running on member2, a Duplicate one and two Divided
// Indexed ones on both members (one of them fenced), and a long Single one on member1,
// for member2's agent and then member1's to be cut off from the hub under them.
type failoverWork struct {
	single, duplicate, divided, stays *musterv1.FleetJob
	// fenced is Divided and Indexed with podReplacementPolicy: Failed.
	fenced *musterv1.FleetJob
	// pods log the pods of the two Divided jobs in each member from before the cut on,
	// by job and member name.
	pods map[string]*framework.PodLog
	// everywhere is a BroadcastJob on both members' work nodes.
	everywhere *musterv1.BroadcastJob
	// failoversBefore is the hub's muster_failovers_total{kind="FleetJob"} before.
	failoversBefore float64
}

// tolerateUnreachable makes a FleetJob tolerate the unreachable taint for toleration.
func tolerateUnreachable(fj *musterv1.FleetJob) {
	fj.Spec.Placement.Tolerations = []corev1.Toleration{{
		Key: musterv1.UnreachableTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(toleration / time.Second)),
	}}
}

// placeFailoverWork creates the jobs and waits until their pods run. member1 is tainted
// NoSchedule while the Single job is placed, so that it lands on member2 (the first by
// name would be member1).
func placeFailoverWork(t *testing.T) *failoverWork {
	t.Helper()
	w := &failoverWork{failoversBefore: failovers(t)}
	w.single = createOnMember2(t, newFleetJob("moves", musterv1.PlacementSingle, 1, 1, lasting(20*time.Second), tolerateUnreachable))
	w.duplicate = create(t, newFleetJob("copies", musterv1.PlacementDuplicate, 1, 1, lasting(20*time.Second), tolerateUnreachable))
	// As long as the fenced job's pods, two at a time in each member, so that the two
	// show the copies of an index with and without fencing side by side.
	w.divided = create(t, newFleetJob("remainder", musterv1.PlacementDivided, 4, 4, indexedMode, lasting(55*time.Second), tolerateUnreachable))
	// Its pods outlast the fence (25 s of silence: the grace period, 40 s, and the
	// toleration, 5 s, less the suite's margin, 20 s), counted from a renewal up to 10 s
	// before the cut, with room for the time from their start to the cut: the fence, not
	// their end, is what stops them.
	// Two pods at a time in each member: member2's two indexes move as one part, which
	// runs them at once in member1.
	w.fenced = create(t, newFleetJob("fenced", musterv1.PlacementDivided, 4, 4, indexedMode, lasting(55*time.Second), tolerateUnreachable, fencedTemplate))
	w.stays = create(t, newFleetJob("stays", musterv1.PlacementSingle, 1, 1, lasting(10*time.Minute), tolerateUnreachable))
	waitForShards(t, w.stays, member1.Name)
	waitForShards(t, w.divided, member1.Name, member2.Name)
	waitForShards(t, w.fenced, member1.Name, member2.Name)
	w.pods = map[string]*framework.PodLog{}
	for _, job := range []string{w.divided.Name, w.fenced.Name} {
		for _, m := range []*framework.Cluster{member1, member2} {
			w.pods[job+"/"+m.Name] = framework.WatchPods(t, m, ns, "app="+job)
		}
	}
	w.everywhere = newBroadcastJob("everywhere", broadcastOutcome("Succeeded", 20*time.Second), func(j *musterv1.BroadcastJob) {
		j.Spec.Placement.Tolerations = []corev1.Toleration{{
			Key: musterv1.UnreachableTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(toleration / time.Second)),
		}}
	})
	if err := fleet.Hub.Client.Create(t.Context(), w.everywhere); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.Background(), w.everywhere) })
	for _, fj := range []*musterv1.FleetJob{w.single, w.duplicate, w.divided, w.fenced, w.stays} {
		waitForPhase(t, fj, musterv1.JobRunning, time.Minute)
	}
	waitForBroadcastPhase(t, w.everywhere, musterv1.BroadcastJobRunning)
	return w
}

// createOnMember2 creates a Single FleetJob and waits until it is placed on member2:
// member1 is tainted NoSchedule meanwhile (the first by name would be member1).
func createOnMember2(t *testing.T, fj *musterv1.FleetJob) *musterv1.FleetJob {
	t.Helper()
	hold := corev1.Taint{Key: "e2e.muster.dev/hold", Effect: corev1.TaintEffectNoSchedule}
	setTaints(t, member1.Name, func(ts []corev1.Taint) []corev1.Taint { return append(ts, hold) })
	create(t, fj)
	waitForShards(t, fj, member2.Name)
	setTaints(t, member1.Name, func(ts []corev1.Taint) []corev1.Taint {
		return slices.DeleteFunc(ts, func(x corev1.Taint) bool { return x.Key == hold.Key })
	})
	return fj
}

// hubOutage is how long the hub is down in TestARestartedHubGivesEveryClusterAFreshGracePeriod:
// long enough that member2's Lease is stale past the grace period (40 s, the hub's
// default) and the job's toleration (5 s) together, with a quarter-minute to spare.
const hubOutage = time.Minute

// TestARestartedHubGivesEveryClusterAFreshGracePeriod stops the hub for a minute
// (hubOutage), in which member2's renewals do not reach it either (its agent is cut off):
// the hub, back, finds member2's Lease a minute stale, past the grace period and the job's
// toleration. It must not take that for member2's own outage: it measures from its own
// start, so its first verdict on member2 is Available, and when member2's agent reaches it
// again, nothing has moved. A taint the test puts on member2 during the outage (NoSchedule,
// which moves nothing) changes its generation, so the verdict the restarted hub writes for
// that generation is the one it reached on the stale Lease.
func TestARestartedHubGivesEveryClusterAFreshGracePeriod(t *testing.T) {
	fj := createOnMember2(t, newFleetJob("outlasts", musterv1.PlacementSingle, 1, 1, lasting(10*time.Minute), tolerateUnreachable))
	waitForPhase(t, fj, musterv1.JobRunning, time.Minute)
	mark := corev1.Taint{Key: "e2e.muster.dev/outage", Effect: corev1.TaintEffectNoSchedule}
	healed := false
	defer func() {
		if !healed {
			reconnect(t, member2)
		}
		setTaints(t, member2.Name, func(ts []corev1.Taint) []corev1.Taint {
			return slices.DeleteFunc(ts, func(x corev1.Taint) bool { return x.Key == mark.Key })
		})
	}()
	err := muster.RestartHub("hub-restarted", func() {
		muster.Links[member2.Name].Cut()
		time.Sleep(hubOutage)
		setTaints(t, member2.Name, func(ts []corev1.Taint) []corev1.Taint { return append(ts, mark) })
	})
	if err != nil {
		t.Fatal(err)
	}
	var mc musterv1.MemberCluster
	var verdict *metav1.Condition
	err = framework.Until(t.Context(), time.Minute, "the restarted hub's verdict on member2", func(ctx context.Context) (bool, string, error) {
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKey{Name: member2.Name}, &mc); err != nil {
			return false, "", err
		}
		verdict = apimeta.FindStatusCondition(mc.Status.Conditions, musterv1.MemberClusterAvailable)
		return verdict != nil && verdict.ObservedGeneration == mc.Generation, fmt.Sprintf("%+v at generation %d", verdict, mc.Generation), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if verdict.Status != metav1.ConditionTrue || slices.ContainsFunc(mc.Spec.Taints, func(x corev1.Taint) bool { return x.Key == musterv1.UnreachableTaintKey }) {
		t.Errorf("the restarted hub judged member2, whose Lease it had not seen renewed for %s, %s (%s) with taints %v; want Available for a fresh grace period, untainted",
			hubOutage, verdict.Status, verdict.Message, mc.Spec.Taints)
	}
	reconnect(t, member2)
	healed = true
	got := waitForPhase(t, fj, musterv1.JobRunning, time.Minute)
	if len(got.Status.Clusters) != 1 || got.Status.Clusters[0].ClusterName != member2.Name || got.Status.Clusters[0].Phase == musterv1.JobEvicted {
		t.Errorf("after the hub's outage %s's shards are %+v; want it left on %s", got.Name, got.Status.Clusters, member2.Name)
	}
	if n := failovers(t); n != 0 {
		t.Errorf("the restarted hub counted %v evictions", n)
	}
}

// expectNothingMovesWithEveryAgentCutOff cuts member1's agent off too: once the hub has
// said it holds the eviction of the job on member1 (every cluster the job selects is
// unreachable, so the hub may be the one cut off), the job is still there and no
// eviction was counted.
func (w *failoverWork) expectNothingMovesWithEveryAgentCutOff(t *testing.T) {
	before := failovers(t)
	muster.Links[member1.Name].Cut()
	err := framework.Until(t.Context(), 2*time.Minute, "a FailoverHeld event on FleetJob stays", func(ctx context.Context) (bool, string, error) {
		var list eventsv1.EventList
		if err := fleet.Hub.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		for _, e := range list.Items {
			if e.Regarding.Kind == "FleetJob" && e.Regarding.Name == w.stays.Name && e.Reason == musterv1.FleetJobReasonFailoverHeld {
				t.Logf("%s: %s", e.Reason, e.Note)
				return true, "", nil
			}
		}
		return false, "no event yet", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got musterv1.FleetJob
	if err := fleet.Hub.Client.Get(t.Context(), client.ObjectKeyFromObject(w.stays), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Clusters) != 1 || got.Status.Clusters[0].ClusterName != member1.Name || got.Status.Clusters[0].Phase == musterv1.JobEvicted {
		t.Errorf("with every agent cut off, %s's shards are %+v; want it left on %s", got.Name, got.Status.Clusters, member1.Name)
	}
	if n := failovers(t) - before; n != 0 {
		t.Errorf("%v evictions counted with every agent cut off", n)
	}
}

// expectMoved waits until, with member2's agent cut off at stopped, the Single job has
// moved to member1 and completed there and the Duplicate job has dropped member2's copy
// and completed on member1, and logs the timeline.
func (w *failoverWork) expectMoved(t *testing.T, stopped time.Time) {
	single := waitForPhase(t, w.single, musterv1.JobComplete, 2*time.Minute)
	duplicate := waitForPhase(t, w.duplicate, musterv1.JobComplete, time.Minute)
	for _, fj := range []*musterv1.FleetJob{single, duplicate} {
		var live, evicted []string
		var evictedAt time.Time
		for _, c := range fj.Status.Clusters {
			if c.Phase == musterv1.JobEvicted {
				evicted = append(evicted, c.ClusterName)
				if c.Eviction == nil || c.Eviction.Reason != musterv1.FleetJobReasonShardEvicted {
					t.Errorf("%s: the evicted shard in %s says %+v", fj.Name, c.ClusterName, c.Eviction)
				} else {
					evictedAt = c.Eviction.Time.Time
				}
				continue
			}
			live = append(live, c.ClusterName)
		}
		if !slices.Equal(live, []string{member1.Name}) || !slices.Equal(evicted, []string{member2.Name}) {
			t.Errorf("%s completed with shards in %v and evicted from %v; want %s and %s", fj.Name, live, evicted, member1.Name, member2.Name)
		}
		if fj.Status.Succeeded != 1 || fj.Status.Progress != "1/1" {
			t.Errorf("%s counts %d succeeded (%s); the evicted copy must not count", fj.Name, fj.Status.Succeeded, fj.Status.Progress)
		}
		t.Logf("%s: agent cut off; evicted %s later; complete %s later", fj.Name,
			evictedAt.Sub(stopped).Round(time.Second), fj.Status.CompletionTime.Sub(stopped).Round(time.Second))
	}
	w.expectIndexesOnce(t, w.divided, stopped)
	w.expectIndexesOnce(t, w.fenced, stopped)
	w.expectFenced(t, stopped)
	if got := failovers(t) - w.failoversBefore; got < 4 {
		t.Errorf("muster_failovers_total{kind=FleetJob} rose by %v, want 4", got)
	}
	w.expectCompleteOnTheRest(t, stopped)
}

// expectCompleteOnTheRest waits until the BroadcastJob completes on member1's nodes alone,
// member2's shard evicted with its reason and its nodes no longer desired.
func (w *failoverWork) expectCompleteOnTheRest(t *testing.T, stopped time.Time) {
	got := waitForBroadcastPhase(t, w.everywhere, musterv1.BroadcastJobCompleted)
	var evicted *musterv1.ClusterBroadcastStatus
	for i, c := range got.Status.Clusters {
		if c.ClusterName == member2.Name && c.Phase == musterv1.BroadcastJobEvicted {
			evicted = &got.Status.Clusters[i]
		}
	}
	if evicted == nil || evicted.Eviction == nil || evicted.Eviction.Reason != musterv1.BroadcastJobReasonShardEvicted {
		t.Fatalf("%s completed with clusters %+v; want %s evicted with reason %s", got.Name, got.Status.Clusters, member2.Name, musterv1.BroadcastJobReasonShardEvicted)
	}
	if got.Status.Desired != 4 || got.Status.Succeeded != 4 {
		t.Errorf("%s counts %+v; want member1's 4 nodes desired and succeeded, member2's no longer", got.Name, got.Status.BroadcastCounts)
	}
	t.Logf("%s: agent cut off; %s evicted %s later; complete %s later", got.Name, member2.Name,
		evicted.Eviction.Time.Sub(stopped).Round(time.Second), got.Status.CompletionTime.Sub(stopped).Round(time.Second))
}

// expectIndexesOnce waits until the Divided job is complete and checks that the hub
// counted every index once: the indexes it saw succeed on member2 before the agent
// stopped, and those member1 ran, its own and the part that moved to it, make 0-3 with
// none twice; member1's pods say the same by their fleet indexes.
func (w *failoverWork) expectIndexesOnce(t *testing.T, divided *musterv1.FleetJob, stopped time.Time) {
	fj := waitForPhase(t, divided, musterv1.JobComplete, 2*time.Minute)
	counted := map[string]int{}
	var evictedAt time.Time
	for _, c := range fj.Status.Clusters {
		if c.Phase == musterv1.JobEvicted && c.Eviction != nil {
			evictedAt = c.Eviction.Time.Time
		}
		for _, i := range indexList(c.CompletedIndexes) {
			counted[i]++
		}
		t.Logf("%s: %s %s completed %q", fj.Name, c.ClusterName, c.Phase, c.CompletedIndexes)
	}
	for _, i := range []string{"0", "1", "2", "3"} {
		if counted[i] != 1 {
			t.Errorf("%s: index %s counted %d times in the hub's status, want once", fj.Name, i, counted[i])
		}
	}
	if fj.Status.Succeeded != 4 || fj.Status.Progress != "4/4" {
		t.Errorf("%s counts %d succeeded (%s), want 4 (4/4)", fj.Name, fj.Status.Succeeded, fj.Status.Progress)
	}
	var pods corev1.PodList
	if err := member1.Client.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels{"app": divided.Name}); err != nil {
		t.Fatal(err)
	}
	ran := map[string]int{}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded {
			ran[p.Annotations[musterv1.GlobalIndexAnnotation]]++
		}
	}
	for i, n := range ran {
		if n != 1 || counted[i] != 1 {
			t.Errorf("%s: fleet index %s succeeded in %d pods of member1, counted %d times", fj.Name, i, n, counted[i])
		}
	}
	t.Logf("%s: agent cut off; evicted %s later; complete %s later; member1 ran fleet indexes %v", fj.Name,
		evictedAt.Sub(stopped).Round(time.Second), fj.Status.CompletionTime.Sub(stopped).Round(time.Second), slices.Sorted(maps.Keys(ran)))
	framework.LogCopies(t, divided.Name, w.pods[divided.Name+"/"+member2.Name].Seen(), w.pods[divided.Name+"/"+member1.Name].Seen(), stopped)
}

// fencedTemplate asks for no replacement pod before the old one is gone, which makes the
// hub fence the job's shards, with a termination grace period well within the suite's
// fencing margin.
func fencedTemplate(fj *musterv1.FleetJob) {
	fj.Spec.Template.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
	fj.Spec.Template.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](5)
}

// expectFenced checks, by the API servers' own timestamps, that the fenced job never ran
// an index in both members at once: member2's agent, cut off, deleted its pods (each
// deletion timestamp, when its grace period ends, is the latest it can still run) before
// member1's first pod of the part that moved there was created; and its Job says Fenced.
func (w *failoverWork) expectFenced(t *testing.T, stopped time.Time) {
	framework.ExpectFenced(t, w.fenced.Name, w.pods[w.fenced.Name+"/"+member2.Name].Seen(), w.pods[w.fenced.Name+"/"+member1.Name].Seen(), stopped)
	var jobs batchv1.JobList
	if err := member2.Client.List(t.Context(), &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.Items {
		if j.Name == w.fenced.Name && !slices.ContainsFunc(j.Status.Conditions, func(c batchv1.JobCondition) bool {
			return c.Type == batchv1.JobFailed && c.Reason == musterv1.JobReasonFenced
		}) {
			t.Errorf("member2's Job %s has conditions %+v; want Failed with reason %s", j.Name, j.Status.Conditions, musterv1.JobReasonFenced)
		}
	}
}

// indexList lists the indexes of a completedIndexes such as "0,2-3" (a few, in tests).
func indexList(s string) []string {
	set := indexset.Parse(s, math.MaxInt32)
	out := make([]string, 0, set.Len())
	for i := range set.Len() {
		n, _ := set.Nth(i)
		out = append(out, strconv.Itoa(n))
	}
	return out
}

// expectWithdrawn waits until member2's agent, back, has deleted the Jobs of the shards
// the hub withdrew while it was away.
func (w *failoverWork) expectWithdrawn(t *testing.T) {
	err := framework.Until(t.Context(), time.Minute, "member2 to delete the withdrawn shards' Jobs", func(ctx context.Context) (bool, string, error) {
		var jobs batchv1.JobList
		if err := member2.Client.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		var left []string
		for _, j := range jobs.Items {
			if j.Name == w.single.Name || j.Name == w.duplicate.Name || j.Name == w.divided.Name || j.Name == w.fenced.Name {
				left = append(left, j.Name)
			}
		}
		var broadcast musterv1.BroadcastJobList
		if err := member2.Client.List(ctx, &broadcast, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		for _, j := range broadcast.Items {
			if j.Name == w.everywhere.Name {
				left = append(left, "BroadcastJob "+j.Name)
			}
		}
		return len(left) == 0, fmt.Sprintf("%v remain", left), nil
	})
	if err != nil {
		t.Error(err)
	}
}

func waitForShards(t *testing.T, fj *musterv1.FleetJob, clusters ...string) {
	t.Helper()
	err := framework.Until(t.Context(), time.Minute, fmt.Sprintf("FleetJob %s placed on %v", fj.Name, clusters), func(ctx context.Context) (bool, string, error) {
		var got musterv1.FleetJob
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(fj), &got); err != nil {
			return false, "", err
		}
		var in []string
		for _, c := range got.Status.Clusters {
			in = append(in, c.ClusterName)
		}
		return slices.Equal(in, clusters), fmt.Sprint(in), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// setTaints changes a MemberCluster's taints.
func setTaints(t *testing.T, cluster string, change func([]corev1.Taint) []corev1.Taint) {
	t.Helper()
	if err := framework.SetClusterTaints(t.Context(), fleet.Hub, cluster, change); err != nil {
		t.Fatal(err)
	}
}

// failovers reads the hub's muster_failovers_total{kind="FleetJob"}.
func failovers(t *testing.T) float64 {
	t.Helper()
	families, err := framework.Scrape(t.Context(), muster.MetricsURLs["hub"])
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range families["muster_failovers_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "kind" && l.GetValue() == "FleetJob" {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
