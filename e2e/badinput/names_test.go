//go:build e2e

package badinput

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/hub/cronjob"
)

// TestNamesCannotBeTaken: names the hub derives for one tenant's objects are not another
// object's to take. Two FleetJobs whose namespace and name join alike both run to
// completion, and a FleetCronJob whose next run's name was taken in advance runs under
// its alternate name, leaving the squatter alone.
func TestNamesCannotBeTaken(t *testing.T) {
	t.Run("FleetJob b-c in badinput-x and FleetJob c in badinput-x-b -> both complete", func(t *testing.T) {
		t.Parallel()
		testNamesakesBothComplete(t)
	})
	t.Run("FleetCronJob whose next run's name a stranger's FleetJob holds -> runs under its alternate name", func(t *testing.T) {
		t.Parallel()
		testSquattedRunName(t)
	})
}

// testNamesakesBothComplete: before names were derived with a hash, both FleetJobs' Works
// were fleetjob-badinput-x-b-c, and the second never ran (ShardNameTaken).
func testNamesakesBothComplete(t *testing.T) {
	ctx := t.Context()
	var jobs []*musterv1.FleetJob
	for _, key := range []client.ObjectKey{{Namespace: "badinput-x", Name: "b-c"}, {Namespace: "badinput-x-b", Name: "c"}} {
		if err := client.IgnoreAlreadyExists(fleet.Hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: key.Namespace}})); err != nil {
			t.Fatal(err)
		}
		fj := fleetJob(key.Name, func(fj *musterv1.FleetJob) {
			fj.Namespace = key.Namespace
			fj.Spec.Placement.ClusterNames = []string{member1Name}
		})
		if err := fleet.Hub.Client.Create(ctx, fj); err != nil {
			t.Fatalf("FleetJob %s refused: %v", key, err)
		}
		t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.Background(), fj) })
		jobs = append(jobs, fj)
	}
	for _, fj := range jobs {
		done := waitFleetJobComplete(t, client.ObjectKeyFromObject(fj), 90*time.Second)
		if done.Status.Succeeded != 1 || len(done.Status.Clusters) != 1 || done.Status.Clusters[0].ClusterName != member1Name {
			t.Errorf("FleetJob %s/%s: status %+v, want 1 succeeded in %s", fj.Namespace, fj.Name, done.Status, member1Name)
		}
	}
	var works musterv1.WorkList
	if err := fleet.Hub.Client.List(ctx, &works, client.InNamespace(memberWorks), client.MatchingLabels{musterv1.FleetJobNameLabel: "b-c"}); err != nil {
		t.Fatal(err)
	}
	var other musterv1.WorkList
	if err := fleet.Hub.Client.List(ctx, &other, client.InNamespace(memberWorks), client.MatchingLabels{musterv1.FleetJobNameLabel: "c"}); err != nil {
		t.Fatal(err)
	}
	if len(works.Items) != 1 || len(other.Items) != 1 || works.Items[0].Name == other.Items[0].Name {
		t.Errorf("Works %v and %v, want one each under different names", workNames(works), workNames(other))
	}
}

func workNames(l musterv1.WorkList) []string {
	var out []string
	for _, w := range l.Items {
		out = append(out, w.Name)
	}
	return out
}

// testSquattedRunName: a stranger's FleetJobs hold the names of the cron's next slots
// (<cron>-<unix minutes>, which anyone can work out) before the cron exists. The cron's
// first run starts on time under its alternate name, says so in a ChildNameTaken
// warning, and completes; the squatters stay as they were.
func testSquattedRunName(t *testing.T) {
	ctx := t.Context()
	const cronName = "squatted"
	next := time.Now().Truncate(time.Minute).Add(time.Minute)
	var squatters []*musterv1.FleetJob
	for i := range 3 {
		slot := next.Add(time.Duration(i) * time.Minute)
		fj := fleetJob(fmt.Sprintf("%s-%d", cronName, slot.Unix()/60))
		if err := fleet.Hub.Client.Create(ctx, fj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.Background(), fj) })
		squatters = append(squatters, fj)
	}
	cj := cronJob(cronName, func(cj *musterv1.FleetCronJob) { cj.Spec.Schedule = "*/1 * * * *" })
	if err := fleet.Hub.Client.Create(ctx, cj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.Background(), cj) })

	run := waitCronRun(t, cj, 2*time.Minute)
	slot, err := time.Parse(time.RFC3339, run.Annotations[musterv1.ScheduledTimeAnnotation])
	if err != nil {
		t.Fatalf("run %s has no scheduled time: %v", run.Name, err)
	}
	if want := cronjob.AlternateChildName(cj, slot); run.Name != want {
		t.Errorf("run %s for %s, want the alternate name %s", run.Name, slot, want)
	}
	if lag := run.CreationTimestamp.Sub(slot); lag > 3*time.Second {
		t.Errorf("run %s created %s after its slot", run.Name, lag)
	}
	taken := cronjob.ChildName(cj, slot)
	want := fmt.Sprintf("FleetJob %s is not this FleetCronJob's: the run for %s is named %s", taken, slot.UTC().Format(time.RFC3339), run.Name)
	err = framework.Until(ctx, 30*time.Second, "a ChildNameTaken event", func(context.Context) (bool, string, error) {
		notes := eventNotes(t, cj.Name, musterv1.FleetCronJobReasonChildNameTaken)
		return slices.Contains(notes, want), fmt.Sprintf("%q, want one saying %q", notes, want), nil
	})
	if err != nil {
		t.Error(err)
	}
	waitFleetJobComplete(t, client.ObjectKeyFromObject(run), 90*time.Second)
	for _, s := range squatters {
		var got musterv1.FleetJob
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(s), &got); err != nil {
			t.Errorf("squatter %s: %v", s.Name, err)
			continue
		}
		if got.UID != s.UID || len(got.OwnerReferences) != 0 || got.DeletionTimestamp != nil {
			t.Errorf("squatter %s was touched: %+v", s.Name, got.ObjectMeta)
		}
	}
}

// waitCronRun waits for the first FleetJob cj controls.
func waitCronRun(t *testing.T, cj *musterv1.FleetCronJob, timeout time.Duration) *musterv1.FleetJob {
	t.Helper()
	var run *musterv1.FleetJob
	err := framework.Until(t.Context(), timeout, "the FleetCronJob's first run", func(ctx context.Context) (bool, string, error) {
		var list musterv1.FleetJobList
		if err := fleet.Hub.Client.List(ctx, &list, client.InNamespace(cj.Namespace)); err != nil {
			return false, err.Error(), nil
		}
		for i := range list.Items {
			if metav1.IsControlledBy(&list.Items[i], cj) {
				run = &list.Items[i]
				return true, "", nil
			}
		}
		return false, "no run yet", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// eventNotes lists the notes of the hub's events about the object named regarding, in
// the suite's namespace, with reason.
func eventNotes(t *testing.T, regarding, reason string) []string {
	t.Helper()
	var events eventsv1.EventList
	if err := fleet.Hub.Client.List(t.Context(), &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range events.Items {
		if e.Regarding.Name == regarding && e.Reason == reason {
			out = append(out, e.Note)
		}
	}
	return out
}
