package broadcastjob_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bcj "github.com/musterhq/muster/api/broadcastjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// TestAnUnreachableClusterIsDroppedAndTheJobCompletesOnTheRest: once the job no longer
// tolerates the unreachable taint of c2, c2's nodes stop counting as desired, its entry
// says why, the job completes on c1's, and c2's Work is withdrawn.
func TestAnUnreachableClusterIsDroppedAndTheJobCompletesOnTheRest(t *testing.T) {
	f := newFixture(t)
	job := f.job("nodes", f.c1, f.c2)
	job.Spec.Placement.Tolerations = []corev1.Toleration{{Key: musterv1.UnreachableTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](0)}}
	f.create(job)
	envtest.Eventually(t, "a shard in each cluster", func() (bool, string) {
		n1, n2 := len(f.works(f.c1)), len(f.works(f.c2))
		return n1 == 1 && n2 == 1, fmt.Sprintf("%d and %d Works", n1, n2)
	})
	running := func(desired int32) musterv1.BroadcastJobStatus {
		return musterv1.BroadcastJobStatus{Phase: musterv1.BroadcastJobRunning, BroadcastCounts: musterv1.BroadcastCounts{Desired: desired, Active: desired}}
	}
	f.agentApplies("nodes", f.c1, "", running(2))
	f.agentApplies("nodes", f.c2, "", running(3))
	envtest.Eventually(t, "5 nodes desired", func() (bool, string) {
		got := f.get("nodes").Status.Desired
		return got == 5, fmt.Sprint(got)
	})

	// c1 is done before c2 goes: the job completes in the very round that evicts c2's
	// shard, and its Work must still be withdrawn after.
	done := musterv1.BroadcastJobStatus{Phase: musterv1.BroadcastJobCompleted, BroadcastCounts: musterv1.BroadcastCounts{Desired: 2, Succeeded: 2}}
	bcj.SetCondition(&done, musterv1.BroadcastJobComplete, metav1.ConditionTrue, musterv1.BroadcastJobReasonCompleted, "")
	f.agentApplies("nodes", f.c1, "", done)
	envtest.Eventually(t, "c1's shard counted done", func() (bool, string) {
		got := f.get("nodes").Status.Succeeded
		return got == 2, fmt.Sprint(got)
	})

	f.taint(f.c2)
	f.waitCondition("nodes", musterv1.BroadcastJobComplete, metav1.ConditionTrue, musterv1.BroadcastJobReasonCompleted, func(j *musterv1.BroadcastJob) bool {
		return j.Status.Succeeded == 2 && j.Status.Desired == 2
	})
	envtest.Eventually(t, "c2 evicted with its reason and its Work withdrawn", func() (bool, string) {
		s := f.get("nodes").Status
		var c2 *musterv1.ClusterBroadcastStatus
		for i := range s.Clusters {
			if s.Clusters[i].ClusterName == f.c2 {
				c2 = &s.Clusters[i]
			}
		}
		works := f.works(f.c2)
		return c2 != nil && c2.Phase == musterv1.BroadcastJobEvicted && c2.Eviction != nil && c2.Eviction.Reason == musterv1.BroadcastJobReasonShardEvicted && len(works) == 0,
			fmt.Sprintf("c2 %+v, %d Works in c2", c2, len(works))
	})
	envtest.Eventually(t, "one FailedOver event", func() (bool, string) {
		n := recorder.Count(f.ns, "nodes", musterv1.BroadcastJobReasonFailedOver)
		return n == 1, fmt.Sprint(n)
	})
}

// taint marks cluster unreachable (NoExecute), stamped with the test clock's time.
func (f *fixture) taint(cluster string) {
	f.t.Helper()
	mc := &musterv1.MemberCluster{}
	if err := env.Client.Get(f.t.Context(), client.ObjectKey{Name: cluster}, mc); err != nil {
		f.t.Fatal(err)
	}
	patch := client.MergeFrom(mc.DeepCopy())
	mc.Spec.Taints = append(mc.Spec.Taints, corev1.Taint{Key: musterv1.UnreachableTaintKey, Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: clock.Now()}})
	if err := env.Client.Patch(f.t.Context(), mc, patch); err != nil {
		f.t.Fatal(err)
	}
}
