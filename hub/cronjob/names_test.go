package cronjob_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cronapi "github.com/musterhq/muster/api/cronjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// notes returns the notes of the namespace's events with reason.
func (f *fixture) notes(reason string) []string {
	f.t.Helper()
	var list eventsv1.EventList
	if err := env.Client.List(f.t.Context(), &list, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, ev := range list.Items {
		if ev.Reason == reason {
			out = append(out, ev.Note)
		}
	}
	return out
}

// TestASquattedRunNameRunsUnderTheAlternateName: a FleetJob the cron does not own holds
// the next run's name. The run starts all the same, under the alternate name, with a
// warning; the cron tracks it as any run (active, Forbid, history) and never touches
// the squatter.
func TestASquattedRunNameRunsUnderTheAlternateName(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *", func(cj *musterv1.FleetCronJob) {
		cj.Spec.ConcurrencyPolicy = musterv1.ConcurrencyForbid
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0)
	})
	squatter := f.child(slotName(f.m1), nil, f.m1)
	f.finish(squatter.Name, true) // finished, so a cron that took it for its own would delete it
	alt := cronapi.AlternateChildName(f.get(cj), f.m1)
	if alt == squatter.Name || !strings.HasPrefix(alt, squatter.Name+"-") || len(alt) > 63 {
		t.Fatalf("alternate name %q for %q", alt, squatter.Name)
	}

	f.tick(cj, time.Minute)
	f.waitChildren(squatter.Name, alt)
	f.waitActive(cj, alt)
	f.expectEventOfType(musterv1.FleetCronJobReasonChildNameTaken, corev1.EventTypeWarning)
	want := "FleetJob " + squatter.Name + " is not this FleetCronJob's: the run for " + f.m1.UTC().Format(time.RFC3339) + " is named " + alt
	if got := f.notes(musterv1.FleetCronJobReasonChildNameTaken); len(got) != 1 || got[0] != want {
		t.Errorf("ChildNameTaken events %q, want one %q", got, want)
	}
	run := f.fleetJobs()[alt]
	if !metav1.IsControlledBy(run, f.get(cj)) || run.Annotations[musterv1.ScheduledTimeAnnotation] != f.m1.UTC().Format(time.RFC3339) {
		t.Errorf("the alternate run is not the cron's run for its slot: owners %v, annotations %v", run.OwnerReferences, run.Annotations)
	}

	// Forbid counts the alternate run as active: the next slot waits for it.
	f.tick(cj, time.Minute)
	f.expectEvent(musterv1.FleetCronJobReasonJobAlreadyActive)
	f.waitChildren(squatter.Name, alt)
	// Once it finished, the history limit of 0 deletes it, and the waiting slot runs
	// under its own name, which is free.
	f.finish(alt, true)
	f.waitChildren(squatter.Name, slotName(f.m1.Add(time.Minute)))
	f.waitActive(cj, slotName(f.m1.Add(time.Minute)))
	got := f.fleetJobs()[squatter.Name]
	if got.UID != squatter.UID || len(got.OwnerReferences) != 0 || got.DeletionTimestamp != nil {
		t.Errorf("the squatter was touched: %+v", got.ObjectMeta)
	}
	if n := len(f.notes(musterv1.FleetCronJobReasonChildNameTaken)); n != 1 {
		t.Errorf("%d ChildNameTaken events, want 1", n)
	}
}

// TestAnAlternateRunCreatedByAnotherReplicaIsNotDuplicated: another replica created the
// slot's run under its alternate name and died before writing status; this one finds it
// and creates nothing more.
func TestAnAlternateRunCreatedByAnotherReplicaIsNotDuplicated(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *", func(cj *musterv1.FleetCronJob) { cj.Spec.Suspend = ptr.To(true) })
	squatter := f.child(slotName(f.m1), nil, f.m1)
	other := f.child(cronapi.AlternateChildName(f.get(cj), f.m1), f.get(cj), f.m1)
	clock.Step(time.Minute)
	f.update(cj, func(cj *musterv1.FleetCronJob) { cj.Spec.Suspend = ptr.To(false) })
	f.eventually("the slot recorded", func() (bool, string) {
		got := f.get(cj).Status
		return got.LastScheduleTime != nil && got.LastScheduleTime.Time.Equal(f.m1), ""
	})
	f.keeps(cj, squatter.Name, other.Name)
	if n := len(f.notes(musterv1.FleetCronJobReasonChildNameTaken)); n != 0 {
		t.Errorf("%d ChildNameTaken events for a run that existed", n)
	}
}

// TestBothRunNamesTakenIsAWarningUntilOneIsFree: with both names held by strangers the
// run cannot start; the cron says so, and starts it once a name is freed.
func TestBothRunNamesTakenIsAWarningUntilOneIsFree(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *")
	first := f.child(slotName(f.m1), nil, f.m1)
	second := f.child(cronapi.AlternateChildName(f.get(cj), f.m1), nil, f.m1)
	f.tick(cj, time.Minute)
	f.expectEventOfType(musterv1.FleetCronJobReasonChildNameTaken, corev1.EventTypeWarning)
	want := "FleetJob " + first.Name + " and " + second.Name + " are not this FleetCronJob's: the run for " + f.m1.UTC().Format(time.RFC3339) + " cannot be created until one goes"
	// Each retry says so again (as a series, or, while the first is being written, an
	// event of its own), always the same.
	if got := f.notes(musterv1.FleetCronJobReasonChildNameTaken); len(got) == 0 || slices.ContainsFunc(got, func(n string) bool { return n != want }) {
		t.Errorf("ChildNameTaken events %q, want %q", got, want)
	}
	f.waitChildren(first.Name, second.Name)
	if st := f.get(cj).Status; len(st.Active) != 0 {
		t.Errorf("active %v with no run", st.Active)
	}
	if err := env.Client.Delete(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	f.waitChildren(first.Name, second.Name) // the run, under the freed name
	f.waitActive(cj, first.Name)
}
