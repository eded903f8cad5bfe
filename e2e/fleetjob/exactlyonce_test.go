//go:build e2e

package fleetjob

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/internal/testing/builders"
)

// TestAWorkRefusedByAQuotaIsPlacedAgainAndEveryIndexRunsOnce is the demo fleet's lost
// half on real processes: a ResourceQuota of no Works in member2's hub namespace refuses
// the shard the hub decides for member2 during a Divided Indexed job's first placement.
// The job says why, its missing indexes are placed again on member1, which accepts them,
// and it completes with each of its indexes run once. It runs before the parallel tests,
// alone: the quota would refuse their shards on member2 too.
func TestAWorkRefusedByAQuotaIsPlacedAgainAndEveryIndexRunsOnce(t *testing.T) {
	ctx := t.Context()
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-no-works", Namespace: musterv1.MemberNamespace(member2.Name)},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/works.muster.dev": resource.MustParse("0")}},
	}
	if err := fleet.Hub.Client.Create(ctx, quota); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.Background(), quota) })
	// The API server's quota admission refuses Works in the namespace: "exceeded quota"
	// once a quota controller computed its use, "status unknown for quota" before (the
	// local fleet's hub runs none). Either is a refused create, as the demo fleet saw.
	err := framework.Until(ctx, time.Minute, "the quota to refuse Works", func(ctx context.Context) (bool, string, error) {
		probe := builders.MakeWork("e2e-probe", member2.Name).ConfigMap("default", "e2e-probe", nil).Obj()
		err := fleet.Hub.Client.Create(ctx, probe, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "quota"), "a dry-run Work create answered " + errString(err), nil
	})
	if err != nil {
		t.Fatal(err)
	}

	fj := create(t, newFleetJob("quota-refused", musterv1.PlacementDivided, 2, 8, indexedMode))
	err = framework.Until(ctx, time.Minute, "ShardsApplied=False ShardNotWritten", func(ctx context.Context) (bool, string, error) {
		var got musterv1.FleetJob
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(fj), &got); err != nil {
			return false, "", err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, musterv1.FleetJobShardsApplied)
		return c != nil && c.Reason == musterv1.FleetJobReasonShardNotWritten && strings.Contains(c.Message, "quota"), got.Status.Progress, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	done := waitForPhase(t, fj, musterv1.JobComplete, 3*time.Minute)
	checkEveryIndexOnce(t, fj, 8)
	if done.Status.Succeeded != 8 || done.Status.Progress != "8/8" {
		t.Errorf("succeeded %d, progress %s; want 8 and 8/8", done.Status.Succeeded, done.Status.Progress)
	}
	for _, c := range done.Status.Clusters {
		if c.ClusterName != member1.Name {
			t.Errorf("a shard in %s, which refused every Work", c.ClusterName)
		}
	}
}

// hubKills is how many times TestAHubKilledDuringADividedPlacementRunsEveryIndexOnce
// kills the hub, each during another job's first placement.
const hubKills = 3

// killSeedEnv names the seed of the kill points, to try a run's points again.
const killSeedEnv = "MUSTER_E2E_KILL_SEED"

// TestAHubKilledDuringADividedPlacementRunsEveryIndexOnce SIGKILLs the hub at a random
// point of a Divided Indexed job's first placement (0 to 200 ms after the create: before
// its decision is recorded, between the record and the Works, or between Works), starts
// it again at once, and expects the job to complete with each index run once, counted
// once. It does so hubKills times, each with its own job, and logs what each kill left
// (the record, how many Works) so a run shows which points it reached. The points come
// from a seed the test prints; killSeedEnv sets it.
func TestAHubKilledDuringADividedPlacementRunsEveryIndexOnce(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(killSeedEnv); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", killSeedEnv, v, err)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("kill points from seed %d (%s=%d tries them again)", seed, killSeedEnv, seed)
	for i := range hubKills {
		name := fmt.Sprintf("hub-killed-%d", i)
		after := time.Duration(rng.Int64N(int64(200 * time.Millisecond)))
		fj := create(t, newFleetJob(name, musterv1.PlacementDivided, 2, 8, indexedMode))
		time.Sleep(after) // the kill point, not a wait for anything
		var left string
		if err := muster.CrashHub(name, func() { left = placementLeft(t, fj) }); err != nil {
			t.Fatal(err)
		}
		done := waitForPhase(t, fj, musterv1.JobComplete, 3*time.Minute)
		t.Logf("%s: hub killed %s after the create, leaving %s; complete, progress %s", name, after, left, done.Status.Progress)
		checkEveryIndexOnce(t, fj, 8)
		if done.Status.Succeeded != 8 {
			t.Errorf("%s: succeeded %d, want 8", name, done.Status.Succeeded)
		}
	}
}

// placementLeft says what a killed hub left of fj's first placement: whether its decision
// was recorded, and how many of its Works exist.
func placementLeft(t *testing.T, fj *musterv1.FleetJob) string {
	t.Helper()
	var got musterv1.FleetJob
	if err := fleet.Hub.Client.Get(t.Context(), client.ObjectKeyFromObject(fj), &got); err != nil {
		t.Fatal(err)
	}
	var works musterv1.WorkList
	if err := fleet.Hub.Client.List(t.Context(), &works, client.MatchingLabels{musterv1.FleetJobUIDLabel: string(got.UID)}); err != nil {
		t.Fatal(err)
	}
	recorded := "no decision recorded"
	if p := got.Status.Placement; p != nil && p.Decisions > 0 {
		recorded = fmt.Sprintf("%d decision(s) recorded", p.Decisions)
	}
	return fmt.Sprintf("%s and %d Work(s)", recorded, len(works.Items))
}

func errString(err error) string {
	if err == nil {
		return "nothing"
	}
	return err.Error()
}
