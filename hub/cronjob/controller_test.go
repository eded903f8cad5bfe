package cronjob_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cronapi "github.com/musterhq/muster/api/cronjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestDueSlotCreatesItsChild(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *")
	f.eventually("nextScheduleTime before the first slot", func() (bool, string) {
		got := f.get(cj)
		return got.Status.NextScheduleTime != nil && got.Status.NextScheduleTime.Time.Equal(f.m1), ""
	})
	if n := len(f.fleetJobs()); n != 0 {
		t.Fatalf("%d children before the first slot", n)
	}
	f.tick(cj, time.Minute)
	f.waitChildren(slotName(f.m1))
	child := f.fleetJobs()[slotName(f.m1)]
	if child.Annotations[musterv1.ScheduledTimeAnnotation] != f.m1.UTC().Format(time.RFC3339) || child.Labels["app"] != "nightly" || !metav1.IsControlledBy(child, f.get(cj)) {
		t.Errorf("child annotations %v labels %v owners %v", child.Annotations, child.Labels, child.OwnerReferences)
	}
	f.eventually("status after the slot", func() (bool, string) {
		got := f.get(cj).Status
		ok := got.LastScheduleTime != nil && got.LastScheduleTime.Time.Equal(f.m1) && len(got.Active) == 1 &&
			got.Active[0].Name == slotName(f.m1) && got.NextScheduleTime != nil && got.NextScheduleTime.Time.Equal(f.m1.Add(time.Minute))
		return ok, ""
	})
	f.expectEvent(musterv1.ReasonSuccessfulCreate)
}

func TestOnlyTheMostRecentMissedSlotRuns(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *")
	f.tick(cj, 5*time.Minute)
	f.waitChildren(slotName(f.m1.Add(4 * time.Minute)))
}

func TestMoreThanAHundredMissedSlotsIsAnEvent(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *")
	f.tick(cj, 3*time.Hour)
	f.waitChildren(slotName(f.m1.Add(179 * time.Minute)))
	f.expectEvent(musterv1.FleetCronJobReasonTooManyMissedTimes)
}

func TestStartingDeadlineSkipsALateSlot(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("0 * * * *", func(cj *musterv1.FleetCronJob) { cj.Spec.StartingDeadlineSeconds = ptr.To[int64](60) })
	// Land two minutes after the next full hour: its slot is past the 60s deadline.
	hour := f.nextHour()
	f.tick(cj, hour.Add(2*time.Minute).Sub(clock.Now()))
	// The pass at that time shows the next slot, an hour on, once it has decided.
	f.waitNext(cj, hour.Add(time.Hour))
	if n := len(f.fleetJobs()); n != 0 {
		t.Fatalf("a slot past startingDeadlineSeconds ran: %v", keys(f.fleetJobs()))
	}
	// Within the deadline the next one runs.
	f.tick(cj, 58*time.Minute+30*time.Second)
	f.waitChildren(slotName(hour.Add(time.Hour)))
}

func TestSuspendCreatesNothingAndResumeRunsTheLatestSlot(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *", func(cj *musterv1.FleetCronJob) { cj.Spec.Suspend = ptr.To(true) })
	f.tick(cj, 2*time.Minute)
	f.pass(cj)
	if n := len(f.fleetJobs()); n != 0 {
		t.Fatal("a suspended cron ran")
	}
	if got := f.get(cj); got.Status.NextScheduleTime != nil {
		t.Errorf("suspended cron shows a next schedule %v", got.Status.NextScheduleTime)
	}
	f.update(cj, func(cj *musterv1.FleetCronJob) { cj.Spec.Suspend = ptr.To(false) })
	f.waitChildren(slotName(f.m1.Add(time.Minute)))
}

func TestForbidSkipsWhileARunIsActive(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *", func(cj *musterv1.FleetCronJob) { cj.Spec.ConcurrencyPolicy = musterv1.ConcurrencyForbid })
	f.tick(cj, time.Minute)
	first := slotName(f.m1)
	f.waitChildren(first)
	f.tick(cj, time.Minute)
	// The event comes at the end of the pass that skipped the slot.
	f.expectEvent(musterv1.FleetCronJobReasonJobAlreadyActive)
	f.exactly(first)
	// As upstream, the skipped slot stays due: without startingDeadlineSeconds it starts
	// late, once the blocking run finished.
	f.finish(first, true)
	f.waitChildren(first, slotName(f.m1.Add(time.Minute)))
}

// TestForbidDoesNotWaitForARunFailoverLost: a run evicted from every member cluster,
// which none can take, counts as finished: it is deleted, and the slot it blocked runs.
func TestForbidDoesNotWaitForARunFailoverLost(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *", func(cj *musterv1.FleetCronJob) { cj.Spec.ConcurrencyPolicy = musterv1.ConcurrencyForbid })
	f.tick(cj, time.Minute)
	first := slotName(f.m1)
	f.waitChildren(first)
	f.tick(cj, time.Minute)
	f.expectEvent(musterv1.FleetCronJobReasonJobAlreadyActive)
	fj := f.fleetJobs()[first]
	meta.SetStatusCondition(&fj.Status.Conditions, metav1.Condition{Type: musterv1.FleetJobScheduled, Status: metav1.ConditionFalse, Reason: musterv1.ReasonNoEligibleClusters, Message: "no member cluster can take the job"})
	fj.Status.Clusters = []musterv1.ClusterJobStatus{{ClusterName: "gone", Phase: musterv1.JobEvicted}}
	if err := env.Client.Status().Update(t.Context(), fj); err != nil {
		t.Fatal(err)
	}
	f.expectEvent(musterv1.FleetCronJobReasonLostJob)
	f.waitChildren(slotName(f.m1.Add(time.Minute)))
}

func TestForbidWithADeadlineDropsTheSkippedSlot(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *", func(cj *musterv1.FleetCronJob) {
		cj.Spec.ConcurrencyPolicy = musterv1.ConcurrencyForbid
		cj.Spec.StartingDeadlineSeconds = ptr.To[int64](20)
	})
	f.tick(cj, f.m1.Add(5*time.Second).Sub(clock.Now()))
	first := slotName(f.m1)
	f.waitChildren(first)
	f.tick(cj, time.Minute)
	f.expectEvent(musterv1.FleetCronJobReasonJobAlreadyActive)
	// The run ends 35s after the skipped slot: past its 20s deadline, it never starts.
	f.tick(cj, 30*time.Second)
	f.finish(first, true)
	// The pass that sees the run finish takes it off the active list, after it decided
	// about the skipped slot.
	f.waitActive(cj)
	f.exactly(first)
	f.tick(cj, 30*time.Second)
	f.waitChildren(first, slotName(f.m1.Add(2*time.Minute)))
}

func TestAllowRunsConcurrently(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *")
	f.tick(cj, time.Minute)
	f.waitChildren(slotName(f.m1))
	f.tick(cj, time.Minute)
	f.waitChildren(slotName(f.m1), slotName(f.m1.Add(time.Minute)))
	f.eventually("two active", func() (bool, string) {
		st := f.get(cj).Status
		// activeCount is what kubectl get's ACTIVE column prints.
		return len(st.Active) == 2 && st.ActiveCount == 2, fmt.Sprintf("%d active, activeCount %d", len(st.Active), st.ActiveCount)
	})
}

func TestReplaceDeletesTheActiveRun(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *", func(cj *musterv1.FleetCronJob) { cj.Spec.ConcurrencyPolicy = musterv1.ConcurrencyReplace })
	f.tick(cj, time.Minute)
	f.waitChildren(slotName(f.m1))
	f.tick(cj, time.Minute)
	f.waitChildren(slotName(f.m1.Add(time.Minute)))
	f.eventually("one active, the new run", func() (bool, string) {
		a := f.get(cj).Status.Active
		return len(a) == 1 && a[0].Name == slotName(f.m1.Add(time.Minute)), ""
	})
}

func TestHistoryLimitsKeepTheNewestRuns(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *", func(cj *musterv1.FleetCronJob) {
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](2)
		cj.Spec.FailedJobsHistoryLimit = ptr.To[int32](1)
	})
	var names []string
	for i := range 5 {
		f.tick(cj, time.Minute)
		name := slotName(f.m1.Add(time.Duration(i) * time.Minute))
		f.eventually("run "+name, func() (bool, string) { return f.fleetJobs()[name] != nil, "" })
		f.finish(name, i != 1 && i != 2) // runs 1 and 2 fail
		names = append(names, name)
	}
	f.tick(cj, time.Second)
	// Successful: 0, 3, 4 → keep 3, 4. Failed: 1, 2 → keep 2.
	f.waitChildren(names[2], names[3], names[4])
}

func TestLastSuccessfulTimeComesFromTheNewestSuccess(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *")
	f.tick(cj, time.Minute)
	f.waitChildren(slotName(f.m1))
	f.tick(cj, time.Second) // still before the next slot
	f.finish(slotName(f.m1), true)
	done := clock.Now()
	f.eventually("lastSuccessfulTime", func() (bool, string) {
		got := f.get(cj).Status
		return got.LastSuccessfulTime != nil && got.LastSuccessfulTime.Time.Equal(done.Truncate(time.Second)) && len(got.Active) == 0, ""
	})
}

func TestDeletingARunDoesNotRunItsSlotAgain(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *")
	f.tick(cj, time.Minute)
	name := slotName(f.m1)
	f.waitChildren(name)
	f.eventually("lastScheduleTime stored", func() (bool, string) { return f.get(cj).Status.LastScheduleTime != nil, "" })
	if err := env.Client.Delete(t.Context(), f.fleetJobs()[name]); err != nil {
		t.Fatal(err)
	}
	f.tick(cj, time.Second) // still before the next slot
	f.waitActive(cj)        // the controller saw the run go
	f.pass(cj)
	if f.fleetJobs()[name] != nil {
		t.Fatalf("the deleted run came back: %v", keys(f.fleetJobs()))
	}
}

func TestARunCreatedByAnotherReplicaIsNotDuplicated(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *", func(cj *musterv1.FleetCronJob) { cj.Spec.Suspend = ptr.To(true) })
	// The other replica created the slot's run and died before writing status.
	other := f.child(cronapi.ChildName(cj, f.m1), f.get(cj), f.m1)
	clock.Step(time.Minute)
	f.update(cj, func(cj *musterv1.FleetCronJob) { cj.Spec.Suspend = ptr.To(false) })
	f.eventually("the slot recorded", func() (bool, string) {
		got := f.get(cj).Status
		return got.LastScheduleTime != nil && got.LastScheduleTime.Time.Equal(f.m1), ""
	})
	f.waitChildren(other.Name)
}

func TestBroadcastJobTemplateCreatesBroadcastJobs(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *", func(cj *musterv1.FleetCronJob) {
		cj.Spec.JobTemplate = nil
		cj.Spec.BroadcastJobTemplate = &musterv1.BroadcastJobTemplateSpec{Spec: musterv1.BroadcastJobSpec{
			Placement: &musterv1.Placement{},
			Template:  fleetJobTemplate().Spec.Template.Spec.Template,
		}}
	})
	f.tick(cj, time.Minute)
	f.eventually("a BroadcastJob run", func() (bool, string) {
		var list musterv1.BroadcastJobList
		if err := env.Client.List(t.Context(), &list, client.InNamespace(f.ns)); err != nil {
			return false, err.Error()
		}
		return len(list.Items) == 1 && list.Items[0].Name == slotName(f.m1) && list.Items[0].Spec.Placement != nil, ""
	})
}

func TestAScheduleThatSlippedThroughIsReported(t *testing.T) {
	for _, tc := range []struct{ name, schedule, tz, want string }{
		{"every", "@every 5m", "", "@every is not supported"},
		{"unknown zone", "* * * * *", "Mars/Olympus", "unknown time zone"},
		{"bad field", "61 * * * *", "", "invalid schedule"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			cj := f.cron(tc.schedule, func(cj *musterv1.FleetCronJob) {
				if tc.tz != "" {
					cj.Spec.TimeZone = ptr.To(tc.tz)
				}
			})
			f.eventually("ScheduleValid=False", func() (bool, string) {
				c := meta.FindStatusCondition(f.get(cj).Status.Conditions, musterv1.FleetCronJobScheduleValid)
				return c != nil && c.Status == metav1.ConditionFalse && c.Reason == musterv1.FleetCronJobReasonInvalidSchedule && contains(c.Message, tc.want), ""
			})
			f.tick(cj, 10*time.Minute)
			f.pass(cj)
			if n := len(f.fleetJobs()); n != 0 {
				t.Fatal("an invalid schedule ran")
			}
			f.expectEvent(musterv1.FleetCronJobReasonInvalidSchedule)
		})
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestTimeZoneSetsTheSlot(t *testing.T) {
	f := newFixture(t)
	// 09:00 in Tokyo (UTC+9, no DST) is 00:00 UTC.
	cj := f.cron("0 9 * * *", func(cj *musterv1.FleetCronJob) { cj.Spec.TimeZone = ptr.To("Asia/Tokyo") })
	f.eventually("nextScheduleTime at 00:00 UTC", func() (bool, string) {
		n := f.get(cj).Status.NextScheduleTime
		return n != nil && n.UTC().Hour() == 0 && n.UTC().Minute() == 0, ""
	})
}

// A FleetCronJob whose schedule names no real day, created while the webhook was down,
// is reported and costs nothing: the suite runs one worker, so a slot search that never
// ended would keep the healthy cron beside it from firing.
func TestAScheduleThatNeverFiresIsReportedAndOthersStillRun(t *testing.T) {
	f := newFixture(t)
	var never []*musterv1.FleetCronJob
	for i, schedule := range []string{"0 0 30 2 *", "59 23 31 2 *", "0 0 31 4,6,9,11 *"} {
		never = append(never, f.cron(schedule, func(cj *musterv1.FleetCronJob) { cj.Name = fmt.Sprintf("never-%d", i) }))
	}
	healthy := f.cron("* * * * *")
	for _, cj := range never {
		f.eventually(cj.Name+" ScheduleValid=False", func() (bool, string) {
			got := f.get(cj).Status
			c := meta.FindStatusCondition(got.Conditions, musterv1.FleetCronJobScheduleValid)
			ok := c != nil && c.Status == metav1.ConditionFalse && c.Reason == musterv1.FleetCronJobReasonInvalidSchedule &&
				c.Message == fmt.Sprintf("schedule %q never fires: no time matches it", cj.Spec.Schedule) && got.NextScheduleTime == nil
			return ok, fmt.Sprintf("%+v", got)
		})
	}
	f.tick(healthy, time.Minute)
	f.waitChildren(slotName(f.m1))
	f.tick(healthy, time.Minute)
	f.waitChildren(slotName(f.m1), slotName(f.m1.Add(time.Minute)))
	f.expectEvent(musterv1.FleetCronJobReasonInvalidSchedule)
}

// A schedule can pass admission and still run out of slots: February 29th has none from
// 2097 to 2103, beyond robfig's five-year search. The cron says so once and stays quiet.
func TestAScheduleWithNoNextSlotIsReportedOnce(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("0 0 29 2 *", func(cj *musterv1.FleetCronJob) { cj.Spec.StartingDeadlineSeconds = ptr.To[int64](60) })
	f.waitNext(cj, nextLeapDay(clock.Now()))
	f.at(cj, time.Date(2097, 3, 1, 0, 0, 0, 0, time.UTC))
	want := `schedule "0 0 29 2 *": no time after now matches the schedule`
	f.eventually("ScheduleValid=False", func() (bool, string) {
		got := f.get(cj).Status
		c := meta.FindStatusCondition(got.Conditions, musterv1.FleetCronJobScheduleValid)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == musterv1.FleetCronJobReasonInvalidSchedule && c.Message == want && got.NextScheduleTime == nil, fmt.Sprintf("%+v", got)
	})
	// A pass now writes nothing and asks for no other: nothing brings the cron back.
	rv := f.get(cj).ResourceVersion
	if res := f.pass(cj); res != (ctrl.Result{}) {
		t.Errorf("a pass asks to come back: %+v", res)
	}
	if got := f.get(cj).ResourceVersion; got != rv {
		t.Errorf("the cron is still being rewritten: resourceVersion %s -> %s", rv, got)
	}
	if n := len(f.fleetJobs()); n != 0 {
		t.Errorf("%d runs, want none", n)
	}
	// Another pass (the clock moved and the object was touched) keeps the condition as it
	// was: the same transition time, not a fresh one every pass.
	before := meta.FindStatusCondition(f.get(cj).Status.Conditions, musterv1.FleetCronJobScheduleValid).LastTransitionTime
	time.Sleep(1100 * time.Millisecond) // condition times have a resolution of a second
	f.at(cj, time.Date(2097, 3, 2, 0, 0, 0, 0, time.UTC))
	f.pass(cj)
	if after := meta.FindStatusCondition(f.get(cj).Status.Conditions, musterv1.FleetCronJobScheduleValid).LastTransitionTime; !after.Equal(&before) {
		t.Errorf("ScheduleValid transitioned again at %v (first at %v)", after, before)
	}
}

func nextLeapDay(after time.Time) time.Time {
	for y := after.Year(); ; y++ {
		if d := time.Date(y, 2, 29, 0, 0, 0, 0, time.UTC); d.Month() == time.February && d.After(after) {
			return d
		}
	}
}
