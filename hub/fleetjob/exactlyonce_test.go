package fleetjob_test

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/indexset"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/builders"
	"github.com/musterhq/muster/internal/testing/envtest"
)

var complete = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}

// refuseWorks has the hub API server refuse Works in cluster's member namespace, as a
// ResourceQuota of no Works does; the returned func lifts it.
func (f *fixture) refuseWorks(cluster string) func() {
	f.t.Helper()
	ctx := f.t.Context()
	q := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "no-works", Namespace: musterv1.MemberNamespace(cluster)},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/works.muster.dev": resource.MustParse("0")}},
	}
	f.create(q)
	// No quota controller runs here: the status it would write is written by hand, and
	// the API server's quota admission then refuses every Work.
	q.Status = corev1.ResourceQuotaStatus{Hard: q.Spec.Hard, Used: corev1.ResourceList{"count/works.muster.dev": resource.MustParse("0")}}
	if err := env.Client.Status().Update(ctx, q); err != nil {
		f.t.Fatal(err)
	}
	envtest.Eventually(f.t, "the quota to refuse Works in "+cluster, func() (bool, string) {
		probe := builders.MakeWork("probe", cluster).ConfigMap("default", "probe", nil).Obj()
		err := env.Client.Create(ctx, probe, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "exceeded quota"), fmt.Sprint(err)
	})
	return func() {
		if err := env.Client.Delete(ctx, q); err != nil {
			f.t.Fatal(err)
		}
	}
}

// TestAShardRefusedAtFirstPlacementIsPlacedAgainAndCounted is the demo fleet's lost
// half: a Divided Indexed job whose shard's Work the hub API server refuses in c2 (a quota
// on Works in the member's namespace). The job says why on ShardsApplied, is not Complete
// when its first shard finishes, and the indexes c2 was to run are placed again where a
// Work is accepted; the job completes with each index run and counted once.
func TestAShardRefusedAtFirstPlacementIsPlacedAgainAndCounted(t *testing.T) {
	f := newFixture(t)
	defer f.refuseWorks(f.c2)()
	fj := f.workers(2)
	fj.Spec.Template.Spec.Completions = ptr.To[int32](6)
	fj.Spec.Template.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	fj.Spec.Placement.Mode = musterv1.PlacementDivided
	fj.Spec.Placement.ClusterNames = []string{f.c1, f.c2}
	f.create(fj)

	c := f.waitCondition(musterv1.FleetJobShardsApplied, metav1.ConditionFalse, musterv1.FleetJobReasonShardNotWritten, nil)
	if !strings.Contains(c.Message, "exceeded quota") || !strings.Contains(c.Message, f.c2) {
		t.Errorf("ShardsApplied says %q, want the quota's refusal and the cluster it refused", c.Message)
	}
	f.agentApplies(f.c1, "", batchv1.JobStatus{Succeeded: 3, CompletedIndexes: "0-2", Conditions: complete})
	envtest.Eventually(t, "every index in a shard, none twice", func() (bool, string) {
		got := f.indexes()
		return got == "0-5", got
	})
	if got := f.fleetJob(); got.Status.Phase == musterv1.JobComplete {
		t.Fatalf("Complete with succeeded %d before the indexes placed again ran", got.Status.Succeeded)
	}
	f.completeAll()
	f.waitCondition(musterv1.FleetJobComplete, metav1.ConditionTrue, musterv1.FleetJobReasonShardsCompleted, nil)
	if got := f.fleetJob(); got.Status.Succeeded != 6 || got.Status.Progress != "6/6" {
		t.Errorf("succeeded %d, progress %s; want 6 and 6/6", got.Status.Succeeded, got.Status.Progress)
	}
	if got := f.indexes(); got != "0-5" {
		t.Errorf("the shards run indexes %s, want 0-5 once each", got)
	}
	if n := recorder.Count(f.ns, "workers", musterv1.FleetJobReasonRestPlaced); n == 0 {
		t.Error("no RestPlaced event")
	}
}

// indexes is the union of the fleet indexes the job's Works run, or "overlap" when two
// Works run the same index.
func (f *fixture) indexes() string {
	f.t.Helper()
	var list musterv1.WorkList
	if err := env.Client.List(f.t.Context(), &list, client.MatchingLabels{musterv1.FleetJobNamespaceLabel: f.ns}); err != nil {
		f.t.Fatal(err)
	}
	var all indexset.Set
	for _, w := range list.Items {
		job := decodeJob(f.t, &w)
		set := indexset.Parse(job.Annotations[musterv1.CompletionIndexesAnnotation], math.MaxInt32)
		if v, ok := job.Annotations[musterv1.IndexOffsetAnnotation]; ok {
			start, _ := strconv.Atoi(v)
			set = indexset.Range(start, start+int(ptr.Deref(job.Spec.Completions, 0)))
		}
		if all.Overlap(set) > 0 {
			return "overlap at " + w.Name
		}
		all = all.Union(set)
	}
	return all.String()
}

// completeAll reports every Work of the job complete, as its agent would.
func (f *fixture) completeAll() {
	f.t.Helper()
	var list musterv1.WorkList
	if err := env.Client.List(f.t.Context(), &list, client.MatchingLabels{musterv1.FleetJobNamespaceLabel: f.ns}); err != nil {
		f.t.Fatal(err)
	}
	for i := range list.Items {
		w := &list.Items[i]
		n := ptr.Deref(decodeJob(f.t, w).Spec.Completions, 1)
		f.report(w, batchv1.JobStatus{Succeeded: n, CompletedIndexes: indexset.Range(0, int(n)).String(), Conditions: complete})
	}
}

// removeMember deletes cluster's MemberCluster, as its admin does; with works, its Works
// go too, as when its member namespace is deleted.
func (f *fixture) removeMember(cluster string, works bool) {
	f.t.Helper()
	if err := env.Client.Delete(f.t.Context(), &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}); err != nil {
		f.t.Fatal(err)
	}
	if works {
		if err := env.Client.DeleteAllOf(f.t.Context(), &musterv1.Work{}, client.InNamespace(musterv1.MemberNamespace(cluster))); err != nil {
			f.t.Fatal(err)
		}
	}
}

// TestASingleJobLeavesARemovedMember: the demo fleet's job Pending for ever. A Single
// job running on c1 whose MemberCluster is deleted moves to c2, whether c1's Work is
// still there (evicted, as under a taint no placement tolerates) or went with its
// namespace (placed again, as no shard accounts for it). Which comes first depends on
// which deletion the hub's cache shows first; either ends with one copy on c2.
func TestASingleJobLeavesARemovedMember(t *testing.T) {
	for _, works := range []bool{false, true} {
		t.Run(map[bool]string{false: "kept", true: "gone"}[works], func(t *testing.T) {
			f := newFixture(t)
			f.single(musterv1.PlacementSingle, nil)
			f.waitShards("@" + f.c1 + "=1/1")
			f.agentApplies(f.c1, "", batchv1.JobStatus{Active: 1})

			f.removeMember(f.c1, works)
			envtest.Eventually(t, "the job moved to "+f.c2, func() (bool, string) {
				got := f.shards()
				return strings.HasSuffix(got, "@"+f.c2+"=1/1") && !strings.Contains(got, f.c1), got
			})
			f.completeAll()
			f.waitCondition(musterv1.FleetJobComplete, metav1.ConditionTrue, musterv1.FleetJobReasonShardsCompleted, nil)
			if got := f.fleetJob(); got.Status.Succeeded != 1 {
				t.Errorf("succeeded %d, want 1", got.Status.Succeeded)
			}
			if !works && !strings.Contains(evicted(f.fleetJob()), f.c1) {
				t.Errorf("evicted shards %q, want the one on %s", evicted(f.fleetJob()), f.c1)
			}
		})
	}
}

// TestADeniedMemberLosesItsShards: a cluster whose MemberCluster is no longer accepted
// gets no NoExecute taint from health, but its Divided shard's unfinished indexes move
// at once all the same.
func TestADeniedMemberLosesItsShards(t *testing.T) {
	f := newFixture(t)
	f.dividedIndexed(300)
	f.agentApplies(f.c2, "", batchv1.JobStatus{Active: 1, Succeeded: 1, CompletedIndexes: "0"})
	envtest.Eventually(t, "c2's success counted", func() (bool, string) {
		got := f.fleetJob().Status.Succeeded
		return got == 1, fmt.Sprint(got)
	})

	mc := &musterv1.MemberCluster{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: f.c2}, mc); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(mc.DeepCopy())
	mc.Spec.Accepted = false
	if err := env.Client.Patch(t.Context(), mc, patch); err != nil {
		t.Fatal(err)
	}
	f.waitShards("@" + f.c1 + "=1/1 @" + f.c1 + "=1/2")
	if got := f.partIndexes(f.c1); got != "3" {
		t.Fatalf("the part on %s runs fleet indexes %q, want 3 (2 succeeded on %s)", f.c1, got, f.c2)
	}
	f.waitCondition(musterv1.FleetJobScheduled, metav1.ConditionTrue, musterv1.FleetJobReasonPlaced, func(fj *musterv1.FleetJob) bool {
		return evicted(fj) == f.c2+"="+musterv1.FleetJobReasonShardEvicted
	})
	for _, c := range f.fleetJob().Status.Clusters {
		if c.Phase == musterv1.JobEvicted && !strings.Contains(c.Eviction.Message, musterv1.DeniedClusterKey) {
			t.Errorf("the evicted shard says %q, want it to name %s", c.Eviction.Message, musterv1.DeniedClusterKey)
		}
	}
}
