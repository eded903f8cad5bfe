//go:build e2e

package fleetcronjob

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

// nextSlot is the first slot of every(period) at least lead from now.
func nextSlot(period, lead time.Duration) time.Time {
	return time.Now().Add(lead).Truncate(period).Add(period)
}

// dailyAt is a cron whose only slot today is at t (UTC), to the second.
func dailyAt(name string, t time.Time) *musterv1.FleetCronJob {
	t = t.UTC()
	return newCron(name, fmt.Sprintf("%d %d %d * * *", t.Second(), t.Minute(), t.Hour()))
}

func sleepUntil(t *testing.T, at time.Time) {
	t.Helper()
	select {
	case <-time.After(time.Until(at)):
	case <-t.Context().Done():
		t.Fatal(t.Context().Err())
	}
}

func waitNextSchedule(t *testing.T, cj *musterv1.FleetCronJob, next time.Time) {
	t.Helper()
	err := framework.Until(t.Context(), 30*time.Second, "the hub to schedule "+next.Format(time.RFC3339), func(ctx context.Context) (bool, string, error) {
		got := &musterv1.FleetCronJob{}
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(cj), got); err != nil {
			return false, err.Error(), nil
		}
		n := got.Status.NextScheduleTime
		return n != nil && n.Time.Equal(next), fmt.Sprint(n), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// downWindow is how long before a slot the hub stops and how long after it the hub comes
// back. The hub has no timer that spans the window (it requeues for the slot itself), so
// 10s either side is as much "down across the slot" as 45s was.
const downWindow = 10 * time.Second

// TestHubDownAcrossASlotRunsItOnceWhenItReturns: the hub stops 10s before a slot and comes
// back 10s after it; within startingDeadlineSeconds the missed slot runs, once.
func TestHubDownAcrossASlotRunsItOnceWhenItReturns(t *testing.T) {
	slot := nextSlot(time.Second, downWindow+10*time.Second)
	cj := dailyAt("downtime", slot)
	cj.Spec.StartingDeadlineSeconds = ptr.To[int64](300)
	createCron(t, cj)
	waitNextSchedule(t, cj, slot)

	sleepUntil(t, slot.Add(-downWindow))
	if time.Until(slot) < 2*time.Second {
		t.Fatalf("the hub took until %s to schedule %s: too late to stop it before the slot", time.Now().UTC().Format(time.RFC3339), slot.Format(time.RFC3339))
	}
	muster.HubProc.Stop()
	sleepUntil(t, slot.Add(downWindow))
	back := time.Now()
	restartHub(t)

	got := waitRuns(t, cj.Name, time.Minute, "the missed slot's run", func(rs runSet) bool { return len(rs) > 0 })
	run := got.at(slot)
	if len(got) != 1 || run == nil {
		t.Fatalf("runs %s: want one, for the missed slot %s", slots(got), slot.Format(time.RFC3339))
	}
	if run.CreationTimestamp.Time.Before(back.Truncate(time.Second)) {
		t.Errorf("run %s created at %s, while the hub was down", run.Name, run.CreationTimestamp)
	}
	// Let the run complete in both members: no second run appears meanwhile.
	got = waitRuns(t, cj.Name, time.Minute, "the run to complete", func(rs runSet) bool {
		return len(rs) != 1 || rs.at(slot) == nil || rs.at(slot).Status.Phase == musterv1.JobComplete
	})
	if len(got) != 1 || got.at(slot) == nil {
		t.Errorf("runs %s after the missed slot ran", slots(got))
	}
}

// TestLeaderKilledAtATickFiresTheSlotOnce: two hub replicas elect a leader; the leader is
// killed as a slot falls due; the other takes over and the slot has exactly one run.
func TestLeaderKilledAtATickFiresTheSlotOnce(t *testing.T) {
	muster.HubProc.Stop()
	t.Cleanup(func() {
		for _, name := range []string{"hub-a", "hub-b"} {
			if p := muster.Hubs[name]; p != nil {
				p.Kill()
			}
		}
		// The suite's hub again, for the tests that follow.
		restartHub(t)
	})
	leader, err := muster.StartHub("hub-a", "--leader-elect=true")
	if err != nil {
		t.Fatal(err)
	}
	first := waitLeader(t, "")
	// The second replica serves the admission webhook too, on its own port, and registers
	// it last, so the API server calls it: admission keeps answering when the leader dies,
	// as a Service in front of every ready replica does in a cluster. (Served by the
	// leader alone, the survivor's first run after the failover was refused whenever the
	// leader died before it created the slot's run.)
	if _, err := muster.StartHub("hub-b", "--leader-elect=true"); err != nil {
		t.Fatal(err)
	}
	waitForWebhook(t)

	// The slot is the cron's only one today: the survivor, leading some 20 s after the
	// kill, must run this slot, not a later one that superseded it.
	slot := nextSlot(time.Second, 10*time.Second)
	cj := dailyAt("failover", slot)
	createCron(t, cj)
	waitNextSchedule(t, cj, slot)
	sleepUntil(t, slot.Add(20*time.Millisecond))
	leader.Kill()
	killed := time.Now()
	waitLeader(t, first)
	t.Logf("leader killed %s after the slot; the other replica leads %s after the kill", killed.Sub(slot), time.Since(killed).Round(time.Second))

	// runs fails on two runs for one slot.
	got := waitRuns(t, cj.Name, 45*time.Second, "the slot's run after the failover", func(rs runSet) bool { return rs.at(slot) != nil })
	created := got.at(slot).CreationTimestamp
	t.Logf("run %s created at %s", got.at(slot).Name, created.Format(time.RFC3339))
	cur := &musterv1.FleetCronJob{}
	if err := fleet.Hub.Client.Get(t.Context(), client.ObjectKeyFromObject(cj), cur); err != nil {
		t.Fatal(err)
	}
	for s, fj := range got {
		if s < cur.CreationTimestamp.Unix() || s > time.Now().Unix() {
			t.Errorf("run %s for slot %s: the cron was created at %s", fj.Name, time.Unix(s, 0).UTC().Format(time.RFC3339), cur.CreationTimestamp.Format(time.RFC3339))
		}
	}
	err = framework.Until(t.Context(), 30*time.Second, "the survivor to record the slot", func(ctx context.Context) (bool, string, error) {
		cur := &musterv1.FleetCronJob{}
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(cj), cur); err != nil {
			return false, err.Error(), nil
		}
		last := cur.Status.LastScheduleTime
		return last != nil && !last.Time.Before(slot), fmt.Sprint(last), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// waitLeader waits until a hub replica other than previous holds the leader Lease, and
// returns its identity.
func waitLeader(t *testing.T, previous string) string {
	t.Helper()
	var holder string
	err := framework.Until(t.Context(), 45*time.Second, "a new hub leader", func(ctx context.Context) (bool, string, error) {
		lease := &coordinationv1.Lease{}
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKey{Namespace: "muster-system", Name: "muster-hub"}, lease); err != nil {
			return false, err.Error(), nil
		}
		holder = ptr.Deref(lease.Spec.HolderIdentity, "")
		return holder != "" && holder != previous, holder, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return holder
}

// restartHub starts the suite's hub again and waits until its admission webhook answers:
// it registers the webhook before it serves it.
func restartHub(t *testing.T) {
	t.Helper()
	if err := muster.StartHubProcess("--leader-elect=false"); err != nil {
		t.Fatal(err)
	}
	waitForWebhook(t)
}

// waitForWebhook waits until the hub registered last admits a FleetCronJob (dry run).
func waitForWebhook(t *testing.T) {
	t.Helper()
	probe := newCron("webhook-probe", "0 0 * * *")
	err := framework.Until(context.Background(), 30*time.Second, "the hub's admission webhook", func(ctx context.Context) (bool, string, error) {
		err := fleet.Hub.Client.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		return err == nil, fmt.Sprint(err), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
