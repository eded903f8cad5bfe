//go:build e2e

package badinput

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/attacks"
	"github.com/musterhq/muster/e2e/framework"
)

// rssSnapshot is the resident memory of each Muster process, by name.
type rssSnapshot map[string]int64

func (s rssSnapshot) String() string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(s)) {
		parts = append(parts, fmt.Sprintf("%s %d MiB", name, s[name]>>20))
	}
	return strings.Join(parts, ", ")
}

// processes are the hub and the two agents.
func processes() map[string]*framework.Process {
	all := map[string]*framework.Process{"hub": muster.HubProc}
	for name, p := range muster.Agents {
		all["agent-"+name] = p
	}
	return all
}

func rssAll(t *testing.T) rssSnapshot {
	t.Helper()
	s := rssSnapshot{}
	for name, p := range processes() {
		rss, err := p.RSS()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s[name] = rss
	}
	return s
}

// expectHealthyProcesses checks that nothing crashed and nothing grew past twice its
// memory at the suite's start.
func expectHealthyProcesses(t *testing.T, start rssSnapshot) {
	for name, p := range processes() {
		if !p.Running() {
			t.Errorf("%s exited (log %s)", name, p.Log)
		}
	}
	now := rssAll(t)
	t.Logf("resident memory at the start: %s; now: %s", start, now)
	for name, rss := range now {
		if rss > 2*start[name] {
			t.Errorf("%s grew from %d MiB to %d MiB, more than twice", name, start[name]>>20, rss>>20)
		}
	}
}

// hugeIndexedWatch is how long the agents' memory is watched while the job runs, and
// hugeIndexedSlack how much it may grow: the agents must keep state for the running
// pods (parallelism 4), never for the 2147483647 completions.
const (
	hugeIndexedWatch = 40 * time.Second
	hugeIndexedSlack = 50 << 20
)

// testHugeIndexed runs an Indexed FleetJob of the largest completions upstream admits,
// divided over both members, and watches the agents' memory while pods run and finish.
// outcome from agent/job (completed indexes kept as intervals, only the next
// parallelism pending indexes computed).
func testHugeIndexed(t *testing.T) {
	ctx := t.Context()
	fj := fleetJob("huge-indexed", indexed(2147483647), func(fj *musterv1.FleetJob) {
		fj.Spec.Placement.Mode = musterv1.PlacementDivided
		fj.Spec.Template.Spec.Parallelism = ptr.To[int32](4)
	})
	before := rssAll(t)
	if err := fleet.Hub.Client.Create(ctx, fj); err != nil {
		t.Fatalf("an Indexed FleetJob of 2147483647 completions was refused: %v", err)
	}
	t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.Background(), fj) })
	peak := rssSnapshot{}
	for end := time.Now().Add(hugeIndexedWatch); time.Now().Before(end); time.Sleep(2 * time.Second) {
		for name, rss := range rssAll(t) {
			peak[name] = max(peak[name], rss)
		}
	}
	var got musterv1.FleetJob
	if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(fj), &got); err != nil {
		t.Fatal(err)
	}
	t.Logf("resident memory before: %s; peak while running: %s; succeeded %d, active %d", before, peak, got.Status.Succeeded, got.Status.Active)
	if got.Status.Succeeded == 0 {
		t.Errorf("no pod succeeded in %s: status %+v", hugeIndexedWatch, got.Status)
	}
	if len(got.Status.Clusters) != 2 {
		t.Errorf("the job runs in %d clusters, want both: %+v", len(got.Status.Clusters), got.Status.Clusters)
	}
	for _, m := range fleet.Members {
		name := "agent-" + m.Name
		if grew := peak[name] - before[name]; grew > hugeIndexedSlack {
			t.Errorf("%s grew by %d MiB running the job, more than %d MiB", name, grew>>20, hugeIndexedSlack>>20)
		}
	}
	// Deleting it stops it everywhere.
	if err := fleet.Hub.Client.Delete(ctx, fj); err != nil {
		t.Fatal(err)
	}
	err := framework.Until(ctx, 2*time.Minute, "the huge FleetJob and its pods gone", func(ctx context.Context) (bool, string, error) {
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(fj), &musterv1.FleetJob{}); !apierrors.IsNotFound(err) {
			return false, "still on the hub", nil
		}
		for _, m := range fleet.Members {
			if n := len(podsOf(t, m, ns, fj.Name)); n > 0 {
				return false, fmt.Sprintf("%d pods left in %s", n, m.Name), nil
			}
		}
		return true, "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// testHealthyFleetJob: after all of the above, an ordinary divided job still completes
// in both members within a minute and a half.
func testHealthyFleetJob(t *testing.T) {
	fj := fleetJob("healthy", func(fj *musterv1.FleetJob) {
		fj.Spec.Placement.Mode = musterv1.PlacementDivided
		fj.Spec.Template.Spec.Parallelism = ptr.To[int32](2)
		fj.Spec.Template.Spec.Completions = ptr.To[int32](4)
	})
	if err := fleet.Hub.Client.Create(t.Context(), fj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.Background(), fj) })
	done := waitFleetJobComplete(t, client.ObjectKeyFromObject(fj), 90*time.Second)
	if done.Status.Succeeded != 4 || len(done.Status.Clusters) != 2 {
		t.Errorf("status %+v: want 4 succeeded over both members", done.Status)
	}
}

// healthyCronPeriod is the healthy cron's period: its schedule names seconds, which the
// local fleet's hub accepts (framework.BuildTags), so the test waits seconds for a slot.
const healthyCronPeriod = 10 * time.Second

// testHealthyCron: a FleetCronJob every healthyCronPeriod creates its run at the next
// slot, within seconds of it, and the run completes.
func testHealthyCron(t *testing.T) {
	ctx := t.Context()
	cj := cronJob("periodic", func(cj *musterv1.FleetCronJob) {
		cj.Spec.Schedule = fmt.Sprintf("*/%d * * * * *", int(healthyCronPeriod/time.Second))
	})
	if err := fleet.Hub.Client.Create(ctx, cj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.Background(), cj) })
	created := time.Now()
	run, err := attacks.FirstRun(ctx, fleet.Hub.Client, cj, healthyCronPeriod+10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	slot, err := time.Parse(time.RFC3339, run.Annotations[musterv1.ScheduledTimeAnnotation])
	if err != nil {
		t.Fatalf("run %s has no scheduled time: %v", run.Name, err)
	}
	if next := created.Truncate(healthyCronPeriod).Add(healthyCronPeriod); slot.Before(next.Add(-healthyCronPeriod)) || slot.After(next) {
		t.Errorf("run %s is for slot %s; the cron was created at %s", run.Name, slot, created)
	}
	if lag := run.CreationTimestamp.Sub(slot); lag > 3*time.Second {
		t.Errorf("run %s created %s after its slot", run.Name, lag)
	}
	waitFleetJobComplete(t, client.ObjectKeyFromObject(run), time.Minute)
}

func waitFleetJobComplete(t *testing.T, key client.ObjectKey, timeout time.Duration) *musterv1.FleetJob {
	t.Helper()
	fj, err := attacks.WaitComplete(t.Context(), fleet.Hub.Client, key, timeout)
	if err != nil {
		t.Fatal(err)
	}
	return fj
}
