//go:build e2e

package join

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

// removalPodRuns is how long the pod of the job that outlives member2's unjoin runs:
// long enough that it is still running on member2 when the cluster is removed.
const removalPodRuns = 20 * time.Second

// holdTaint keeps new shards off member1 while the removal test's job is placed on member2.
var holdTaint = corev1.Taint{Key: "e2e.muster.dev/hold", Effect: corev1.TaintEffectNoSchedule}

// runningOnMember2 creates a Single FleetJob over member1 and member2 whose one pod runs
// removalPodRuns, places it on member2 (member1 is tainted NoSchedule until it is there)
// and waits until member2's agent reports it running.
func runningOnMember2(t *testing.T) *musterv1.FleetJob {
	t.Helper()
	fj := &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: "outlives-unjoin", Namespace: "default"},
		Spec: musterv1.FleetJobSpec{
			Placement: musterv1.FleetJobPlacement{Mode: musterv1.PlacementSingle, Placement: musterv1.Placement{
				ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
			}},
			Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Parallelism: ptr.To[int32](1), Completions: ptr.To[int32](1),
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{
						Labels:      map[string]string{"app": "outlives-unjoin", "e2e.muster.dev/outcome": "Succeeded"},
						Annotations: map[string]string{"e2e.muster.dev/delay": removalPodRuns.String()},
					},
					Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
				},
			}},
		},
	}
	setMemberTaints(t, "member1", func(ts []corev1.Taint) []corev1.Taint { return append(ts, holdTaint) })
	defer setMemberTaints(t, "member1", func(ts []corev1.Taint) []corev1.Taint {
		return slices.DeleteFunc(ts, func(x corev1.Taint) bool { return x.Key == holdTaint.Key })
	})
	if err := fleet.Hub.Client.Create(t.Context(), fj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.Background(), fj) })
	waitForFleetJob(t, fj, "running on member2", time.Minute, func(got *musterv1.FleetJob) bool {
		return len(got.Status.Clusters) == 1 && got.Status.Clusters[0].ClusterName == "member2" && got.Status.Clusters[0].Active == 1
	})
	return fj
}

// expectMovedOffMember2 waits for the job placed by runningOnMember2 to complete once
// member2 is gone: its shard left member2 (evicted as denied or removed, or gone with its
// Work) for member1, whose pod ran, and it counts one success, not two. That member2's pod
// may have run to the end too is what a removal allows (README, the faults table); its
// stopped agent never reports it, so it is not counted.
func expectMovedOffMember2(t *testing.T, fj *musterv1.FleetJob) {
	t.Helper()
	got := waitForFleetJob(t, fj, "Complete", removalPodRuns+2*time.Minute, func(got *musterv1.FleetJob) bool {
		return got.Status.Phase == musterv1.JobComplete
	})
	if got.Status.Succeeded != 1 {
		t.Errorf("the job that outlived member2 counts %d successes, want 1", got.Status.Succeeded)
	}
	for _, c := range got.Status.Clusters {
		switch {
		case c.ClusterName == "member1" && c.Phase != musterv1.JobComplete:
			t.Errorf("its shard on member1 is %s, want Complete", c.Phase)
		case c.ClusterName == "member2" && (c.Phase != musterv1.JobEvicted || !leftTheFleet(c.Eviction)):
			t.Errorf("its shard on member2 is %s (%+v), want Evicted as %s or %s", c.Phase, c.Eviction, musterv1.DeniedClusterKey, musterv1.RemovedClusterKey)
		}
	}
	if !slices.ContainsFunc(got.Status.Clusters, func(c musterv1.ClusterJobStatus) bool { return c.ClusterName == "member1" }) {
		t.Errorf("the job completed with shards %+v, none on member1", got.Status.Clusters)
	}
}

// leftTheFleet says the eviction is member2's leaving: unjoin first denies the cluster, then
// deletes it, and the hub may see either first.
func leftTheFleet(e *musterv1.ShardEviction) bool {
	return e != nil && (strings.Contains(e.Message, musterv1.DeniedClusterKey) || strings.Contains(e.Message, musterv1.RemovedClusterKey))
}

func waitForFleetJob(t *testing.T, fj *musterv1.FleetJob, what string, timeout time.Duration, done func(*musterv1.FleetJob) bool) *musterv1.FleetJob {
	t.Helper()
	var got musterv1.FleetJob
	err := framework.Until(t.Context(), timeout, "FleetJob "+fj.Name+" "+what, func(ctx context.Context) (bool, string, error) {
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(fj), &got); err != nil {
			return false, err.Error(), nil
		}
		var parts []string
		for _, c := range got.Status.Clusters {
			parts = append(parts, fmt.Sprintf("%s:%s a=%d s=%d", c.ClusterName, c.Phase, c.Active, c.Succeeded))
		}
		return done(&got), fmt.Sprintf("%s %s", got.Status.Phase, strings.Join(parts, "; ")), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return &got
}

func setMemberTaints(t *testing.T, cluster string, change func([]corev1.Taint) []corev1.Taint) {
	t.Helper()
	if err := framework.SetClusterTaints(t.Context(), fleet.Hub, cluster, change); err != nil {
		t.Fatal(err)
	}
}
