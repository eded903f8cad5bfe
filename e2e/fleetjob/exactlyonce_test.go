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

// killSeedEnv names the seed of the random kill point, to try a run's point again.
const killSeedEnv = "MUSTER_E2E_KILL_SEED"

// killPoint waits in a Divided job's first placement for the moment to kill the hub at,
// and says what that moment was.
type killPoint struct {
	name string
	wait func(ctx context.Context, fj *musterv1.FleetJob) error
}

// TestAHubKilledDuringADividedPlacementRunsEveryIndexOnce SIGKILLs the hub during a
// Divided Indexed job's first placement, starts it again at once, and expects the job to
// complete with each index run once, counted once. Three jobs, three kill points: a random
// instant of the first second after the create (the demo fleet's control: from a seed the
// test prints, killSeedEnv sets it), the moment the decision is seen recorded, and the
// moment its first Work is seen. Each logs what the kill left (the record, how many Works)
// so a run shows which states it reached; the seeded harness (hub/robustness) reaches
// each state deterministically.
func TestAHubKilledDuringADividedPlacementRunsEveryIndexOnce(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(killSeedEnv); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", killSeedEnv, v, err)
		}
	}
	after := time.Duration(rand.New(rand.NewPCG(seed, 0)).Int64N(int64(time.Second)))
	t.Logf("random kill point %s from seed %d (%s=%d tries it again)", after, seed, killSeedEnv, seed)
	points := []killPoint{
		{name: fmt.Sprintf("%s after the create", after), wait: func(context.Context, *musterv1.FleetJob) error {
			time.Sleep(after) // the kill point, not a wait for anything
			return nil
		}},
		{name: "once the decision is recorded", wait: func(ctx context.Context, fj *musterv1.FleetJob) error {
			return pollPlacement(ctx, fj, func(recorded bool, _ int) bool { return recorded })
		}},
		{name: "once a Work exists", wait: func(ctx context.Context, fj *musterv1.FleetJob) error {
			return pollPlacement(ctx, fj, func(_ bool, works int) bool { return works > 0 })
		}},
	}
	for i, point := range points {
		name := fmt.Sprintf("hub-killed-%d", i)
		fj := create(t, newFleetJob(name, musterv1.PlacementDivided, 2, 8, indexedMode))
		if err := point.wait(t.Context(), fj); err != nil {
			t.Fatal(err)
		}
		var left string
		if err := muster.CrashHub(name, func() { left = placementLeft(t.Context(), fj) }); err != nil {
			t.Fatal(err)
		}
		done := waitForPhase(t, fj, musterv1.JobComplete, 3*time.Minute)
		t.Logf("%s: hub killed %s, leaving %s; complete, progress %s", name, point.name, left, done.Status.Progress)
		checkEveryIndexOnce(t, fj, 8)
		if done.Status.Succeeded != 8 {
			t.Errorf("%s: succeeded %d, want 8", name, done.Status.Succeeded)
		}
	}
}

// pollPlacement reads fj's placement every few milliseconds until done says
// its state (decision recorded, Works written) is the one to kill the hub at.
func pollPlacement(ctx context.Context, fj *musterv1.FleetJob, done func(recorded bool, works int) bool) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		recorded, works, err := placementState(ctx, fj)
		if err != nil {
			return fmt.Errorf("waiting for the kill point: %w", err)
		}
		if done(recorded, works) {
			return nil
		}
		time.Sleep(5 * time.Millisecond) // a kill point within a few ms, without spinning on the API server
	}
}

// placementLeft says what a killed hub left of fj's first placement. It never stops the
// test: the hub it runs without must be started again.
func placementLeft(ctx context.Context, fj *musterv1.FleetJob) string {
	recorded, works, err := placementState(ctx, fj)
	switch {
	case err != nil:
		return "unknown (" + err.Error() + ")"
	case recorded:
		return fmt.Sprintf("its decision recorded and %d Work(s)", works)
	default:
		return fmt.Sprintf("no decision recorded and %d Work(s)", works)
	}
}

// placementState is whether fj's first placement decision is recorded, and how many of
// its Works exist.
func placementState(ctx context.Context, fj *musterv1.FleetJob) (bool, int, error) {
	var got musterv1.FleetJob
	if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(fj), &got); err != nil {
		return false, 0, err
	}
	var works musterv1.WorkList
	if err := fleet.Hub.Client.List(ctx, &works, client.MatchingLabels{musterv1.FleetJobUIDLabel: string(got.UID)}); err != nil {
		return false, 0, err
	}
	return got.Status.Placement != nil && got.Status.Placement.Decisions > 0, len(works.Items), nil
}

func errString(err error) string {
	if err == nil {
		return "nothing"
	}
	return err.Error()
}
