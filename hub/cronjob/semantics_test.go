package cronjob_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cronapi "github.com/musterhq/muster/api/cronjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/cronjob"
)

func newYork(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestEditingTheScheduleMovesTheNextSlot(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("0 0 1 1 *")
	f.waitNext(cj, time.Date(f.m1.Year()+1, 1, 1, 0, 0, 0, 0, time.UTC))
	f.update(cj, func(cj *musterv1.FleetCronJob) { cj.Spec.Schedule = "*/1 * * * *" })
	f.waitNext(cj, f.m1)
	f.tick(cj, time.Minute)
	f.waitChildren(slotName(f.m1))
}

func TestEditingTheTimeZoneMovesTheNextSlot(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("0 9 * * *")
	nineUTC := f.m1.Truncate(24 * time.Hour).Add(9 * time.Hour)
	if !nineUTC.After(clock.Now()) {
		nineUTC = nineUTC.Add(24 * time.Hour)
	}
	f.waitNext(cj, nineUTC)
	f.update(cj, func(cj *musterv1.FleetCronJob) { cj.Spec.TimeZone = ptr.To("Asia/Kolkata") })
	// 09:00 in India (UTC+5:30) is 03:30 UTC.
	f.eventually("nextScheduleTime at 03:30 UTC", func() (bool, string) {
		n := f.get(cj).Status.NextScheduleTime
		return n != nil && n.UTC().Hour() == 3 && n.UTC().Minute() == 30, ""
	})
}

func TestSpringForwardSkipsASlotInTheMissingHour(t *testing.T) {
	f := newFixture(t)
	ny := newYork(t)
	// The deadline keeps the months between the test's real now and the DST day out of the
	// search for missed slots.
	cj := f.cron("30 2 * * *", func(cj *musterv1.FleetCronJob) {
		cj.Spec.TimeZone = ptr.To("America/New_York")
		cj.Spec.StartingDeadlineSeconds = ptr.To[int64](300)
	})
	// On 2027-03-14 clocks in New York jump from 02:00 to 03:00: there is no 02:30.
	f.at(cj, time.Date(2027, 3, 14, 1, 50, 0, 0, ny))
	f.waitNext(cj, time.Date(2027, 3, 15, 2, 30, 0, 0, ny))
	f.at(cj, time.Date(2027, 3, 14, 3, 31, 0, 0, ny))
	f.keeps(cj)
}

func TestFallBackRunsASlotInTheRepeatedHourTwice(t *testing.T) {
	f := newFixture(t)
	ny := newYork(t)
	cj := f.cron("30 1 * * *", func(cj *musterv1.FleetCronJob) {
		cj.Spec.TimeZone = ptr.To("America/New_York")
		cj.Spec.StartingDeadlineSeconds = ptr.To[int64](300)
	})
	// On 2027-11-07 New York's 01:00–02:00 happens twice: 01:30 EDT (05:30 UTC), then
	// 01:30 EST (06:30 UTC). Like the built-in controller, both run.
	firstRun := time.Date(2027, 11, 7, 5, 30, 0, 0, time.UTC)
	f.at(cj, firstRun.Add(time.Minute))
	f.waitChildren(slotName(firstRun))
	f.waitNext(cj, firstRun.Add(time.Hour))
	f.tick(cj, time.Hour)
	f.waitChildren(slotName(firstRun), slotName(firstRun.Add(time.Hour)))
	f.waitNext(cj, time.Date(2027, 11, 8, 1, 30, 0, 0, ny))
}

func TestDescriptorSchedules(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("@hourly")
	hour := f.nextHour()
	f.waitNext(cj, hour)
	f.at(cj, hour.Add(time.Second))
	f.waitChildren(slotName(hour))
}

func TestAFailedRunDoesNotBlockForbidNorCountAsSuccess(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *", func(cj *musterv1.FleetCronJob) { cj.Spec.ConcurrencyPolicy = musterv1.ConcurrencyForbid })
	f.tick(cj, time.Minute)
	f.waitChildren(slotName(f.m1))
	f.tick(cj, time.Second)
	f.finish(slotName(f.m1), false)
	f.tick(cj, time.Minute)
	f.waitChildren(slotName(f.m1), slotName(f.m1.Add(time.Minute)))
	if got := f.get(cj).Status.LastSuccessfulTime; got != nil {
		t.Errorf("lastSuccessfulTime %v after a failed run", got)
	}
}

func TestReplaceLeavesFinishedRunsAlone(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *", func(cj *musterv1.FleetCronJob) { cj.Spec.ConcurrencyPolicy = musterv1.ConcurrencyReplace })
	f.tick(cj, time.Minute)
	f.waitChildren(slotName(f.m1))
	f.tick(cj, time.Second)
	f.finish(slotName(f.m1), true)
	f.tick(cj, time.Minute)
	f.keeps(cj, slotName(f.m1), slotName(f.m1.Add(time.Minute)))
	if slices.Contains(f.eventReasons(), musterv1.ReasonSuccessfulDelete) {
		t.Error("Replace deleted a finished run")
	}
}

func TestReplaceStopsEveryActiveRun(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *")
	f.tick(cj, time.Minute)
	f.waitChildren(slotName(f.m1))
	f.tick(cj, time.Minute)
	f.waitChildren(slotName(f.m1), slotName(f.m1.Add(time.Minute)))
	f.update(cj, func(cj *musterv1.FleetCronJob) { cj.Spec.ConcurrencyPolicy = musterv1.ConcurrencyReplace })
	f.waitObserved(cj)
	f.tick(cj, time.Minute)
	f.waitChildren(slotName(f.m1.Add(2 * time.Minute)))
	f.expectEvent(musterv1.ReasonSuccessfulDelete)
}

func TestSuspendKeepsRunsThatAlreadyStarted(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *")
	f.tick(cj, time.Minute)
	f.waitChildren(slotName(f.m1))
	f.update(cj, func(cj *musterv1.FleetCronJob) { cj.Spec.Suspend = ptr.To(true) })
	f.eventually("suspended: no next slot", func() (bool, string) { return f.get(cj).Status.NextScheduleTime == nil, "" })
	f.tick(cj, time.Minute)
	f.keeps(cj, slotName(f.m1))
	got := f.get(cj).Status
	if len(got.Active) != 1 || got.LastScheduleTime == nil || !got.LastScheduleTime.Time.Equal(f.m1) {
		t.Errorf("suspended cron status: active %v lastScheduleTime %v", got.Active, got.LastScheduleTime)
	}
}

func TestAHistoryLimitOfZeroDeletesRunsAsTheyFinish(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *", func(cj *musterv1.FleetCronJob) {
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0)
		cj.Spec.FailedJobsHistoryLimit = ptr.To[int32](0)
	})
	f.tick(cj, time.Minute)
	f.waitChildren(slotName(f.m1))
	f.tick(cj, time.Minute)
	f.waitChildren(slotName(f.m1), slotName(f.m1.Add(time.Minute)))
	f.tick(cj, time.Second)
	// Unfinished runs are never history: both stay until they finish.
	f.keeps(cj, slotName(f.m1), slotName(f.m1.Add(time.Minute)))
	f.finish(slotName(f.m1), true)
	f.waitChildren(slotName(f.m1.Add(time.Minute)))
	f.finish(slotName(f.m1.Add(time.Minute)), false)
	f.waitChildren()
	f.expectEvent(musterv1.ReasonSuccessfulDelete)
}

func TestJobsTheCronDoesNotOwnAreIgnored(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *", func(cj *musterv1.FleetCronJob) {
		cj.Spec.ConcurrencyPolicy = musterv1.ConcurrencyForbid
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0)
	})
	// Someone's own FleetJob, named like a run and running: not a run of this cron.
	stranger := f.child("nightly-1", nil, f.m1)
	f.tick(cj, time.Minute)
	f.waitChildren(stranger.Name, slotName(f.m1))
	f.finish(stranger.Name, true)
	f.tick(cj, time.Second)
	f.keeps(cj, stranger.Name, slotName(f.m1))
	if a := f.get(cj).Status.Active; len(a) != 1 || a[0].Name != slotName(f.m1) {
		t.Errorf("active %v, want only the cron's run", a)
	}
}

func TestARunBeingDeletedIsNotActive(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *", func(cj *musterv1.FleetCronJob) { cj.Spec.ConcurrencyPolicy = musterv1.ConcurrencyForbid })
	f.tick(cj, time.Minute)
	f.waitChildren(slotName(f.m1))
	// A finalizer holds the run while its shards are released in the members.
	run := f.fleetJobs()[slotName(f.m1)]
	run.Finalizers = []string{"test.muster.dev/hold"}
	if err := env.Client.Update(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		run.Finalizers = nil
		_ = env.Client.Patch(t.Context(), run, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))
	})
	f.tick(cj, time.Minute)
	f.waitChildren(slotName(f.m1.Add(time.Minute)))
	f.eventually("only the new run active", func() (bool, string) {
		a := f.get(cj).Status.Active
		return len(a) == 1 && a[0].Name == slotName(f.m1.Add(time.Minute)), fmt.Sprint(a)
	})
}

func TestTheControllerWakesAtTheNextSlot(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("*/5 * * * *")
	next := clock.Now().Truncate(5 * time.Minute).Add(5 * time.Minute)
	f.waitNext(cj, next)
	r := &cronjob.Reconciler{Client: cached, Recorder: events.NewFakeRecorder(10), Clock: clock}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(cj)}
	want := next.Sub(clock.Now())
	f.eventually("a reconcile that is not a conflict with the running controller", func() (bool, string) {
		res, err := r.Reconcile(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		return res.RequeueAfter == want, fmt.Sprintf("requeue after %v, want %v (the next slot)", res.RequeueAfter, want)
	})
}

func TestAMissedSlotWithinTheDeadlineStillRuns(t *testing.T) {
	f := newFixture(t)
	hourly := fmt.Sprintf("%d * * * *", f.m1.Minute())
	cj := f.cron(hourly, func(cj *musterv1.FleetCronJob) { cj.Spec.StartingDeadlineSeconds = ptr.To[int64](300) })
	// The hub was down from before the slot until 90s after it.
	f.at(cj, f.m1.Add(90*time.Second))
	f.waitChildren(slotName(f.m1))
	f.eventually("lastScheduleTime at the missed slot", func() (bool, string) {
		got := f.get(cj).Status.LastScheduleTime
		return got != nil && got.Time.Equal(f.m1), fmt.Sprint(got)
	})
}

func TestADeadlineBoundsTheMissedSlotCount(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *", func(cj *musterv1.FleetCronJob) { cj.Spec.StartingDeadlineSeconds = ptr.To[int64](600) })
	f.tick(cj, 3*time.Hour)
	f.waitChildren(slotName(f.m1.Add(179 * time.Minute)))
	f.expectEvent(musterv1.ReasonSuccessfulCreate)
	if slices.Contains(f.eventReasons(), musterv1.FleetCronJobReasonTooManyMissedTimes) {
		t.Error("TooManyMissedTimes reported although only 10 slots fall within the deadline")
	}
}

func TestFixingAnInvalidScheduleStartsRuns(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("61 * * * *")
	valid := func(want metav1.ConditionStatus) func() (bool, string) {
		return func() (bool, string) {
			got := f.get(cj)
			c := meta.FindStatusCondition(got.Status.Conditions, musterv1.FleetCronJobScheduleValid)
			return c != nil && c.Status == want && c.ObservedGeneration == got.Generation, ""
		}
	}
	f.eventually("ScheduleValid=False", valid(metav1.ConditionFalse))
	f.update(cj, func(cj *musterv1.FleetCronJob) { cj.Spec.Schedule = "* * * * *" })
	f.eventually("ScheduleValid=True for the new generation", valid(metav1.ConditionTrue))
	f.tick(cj, time.Minute)
	f.waitChildren(slotName(f.m1))
}

func TestAnUnrecordedRunStillCountsAsItsSlotsRun(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *", func(cj *musterv1.FleetCronJob) { cj.Spec.Suspend = ptr.To(true) })
	// A replica created the run for m1 and died before it could record the slot; then the
	// run was deleted. The slot must not run a second time.
	run := f.child(cronapi.ChildName(cj, f.m1), f.get(cj), f.m1)
	f.eventually("lastScheduleTime taken from the run", func() (bool, string) {
		got := f.get(cj).Status.LastScheduleTime
		return got != nil && got.Time.Equal(f.m1), fmt.Sprint(got)
	})
	if err := env.Client.Delete(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	clock.SetTime(f.m1.Add(30 * time.Second))
	f.update(cj, func(cj *musterv1.FleetCronJob) { cj.Spec.Suspend = ptr.To(false) })
	f.waitNext(cj, f.m1.Add(time.Minute))
	f.keeps(cj)
}

// TestARunsSlotAnnotationDoesNotStopTheCron: lastScheduleTime is the cron's own record.
// Anyone who may edit FleetJobs can rewrite a run's scheduled-time annotation, or create a
// FleetJob the cron controls named for a slot years ahead; neither moves lastScheduleTime
// past the slots still to run.
func TestARunsSlotAnnotationDoesNotStopTheCron(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *")
	f.tick(cj, time.Minute)
	first := slotName(f.m1)
	f.waitChildren(first)
	f.eventually("the first slot recorded", func() (bool, string) {
		got := f.get(cj).Status.LastScheduleTime
		return got != nil && got.Time.Equal(f.m1), fmt.Sprint(got)
	})
	far := time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC)
	run := f.fleetJobs()[first]
	run.Annotations[musterv1.ScheduledTimeAnnotation] = far.Format(time.RFC3339)
	if err := env.Client.Update(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	forged := f.child(cronapi.ChildName(cj, far), f.get(cj), far)
	f.tick(cj, time.Minute)
	f.waitChildren(first, forged.Name, slotName(f.m1.Add(time.Minute)))
	f.eventually("the second slot recorded", func() (bool, string) {
		got := f.get(cj).Status.LastScheduleTime
		return got != nil && got.Time.Equal(f.m1.Add(time.Minute)), fmt.Sprint(got)
	})
}
