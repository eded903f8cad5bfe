package cronjob

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	cronapi "github.com/musterhq/muster/api/cronjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// The pure decisions of a pass: what the schedule asks for, what the runs say about the
// status, which runs history keeps, and what a due slot needs.

const scheduleValidMessage = "the schedule and time zone are valid"

// validity is a ScheduleValid condition to set.
type validity struct {
	status          metav1.ConditionStatus
	reason, message string
}

var scheduleValid = validity{metav1.ConditionTrue, musterv1.FleetCronJobReasonScheduleValid, scheduleValidMessage}

// timing is what the cron's schedule says before the runs are looked at.
type timing struct {
	sched cron.Schedule
	// stopped, when set, is why no slot runs and the condition that says so: the schedule
	// does not parse (admission should have refused it; if it slipped through, the cron
	// says so and waits for a fix), or the cron is suspended.
	stopped *validity
	// horizon is the latest slot a run of the cron can be for: the next slot (a replica
	// whose clock runs a little ahead of this one's may have run it already), or now when
	// the schedule has none.
	horizon time.Time
}

// decideTiming parses the cron's schedule at now.
func decideTiming(cj *musterv1.FleetCronJob, now time.Time) timing {
	sched, err := cronapi.Parse(cj.Spec.Schedule, ptr.Deref(cj.Spec.TimeZone, ""))
	if err != nil {
		return timing{stopped: &validity{metav1.ConditionFalse, musterv1.FleetCronJobReasonInvalidSchedule, err.Error()}, horizon: now}
	}
	t := timing{sched: sched, horizon: now}
	if next := sched.Next(now); next.After(now) {
		t.horizon = next
	}
	if ptr.Deref(cj.Spec.Suspend, false) {
		t.stopped = &scheduleValid
	}
	return t
}

// slotsAt finds the slot due at now, if any, and the next one: the search for missed
// slots starts at the last slot run (or the cron's creation), no earlier than
// startingDeadlineSeconds before now.
func slotsAt(t timing, cj *musterv1.FleetCronJob, status *musterv1.FleetCronJobStatus, now time.Time) (cronapi.Slots, error) {
	var last *time.Time
	if status.LastScheduleTime != nil {
		last = &status.LastScheduleTime.Time
	}
	earliest := cronapi.EarliestConsidered(last, cj.CreationTimestamp.Time, cj.Spec.StartingDeadlineSeconds, now)
	return cronapi.Plan(t.sched, earliest, now)
}

// noNextSlot is the condition of a schedule with no slot after now.
func noNextSlot(cj *musterv1.FleetCronJob, err error) validity {
	return validity{metav1.ConditionFalse, musterv1.FleetCronJobReasonInvalidSchedule, fmt.Sprintf("schedule %q: %v", cj.Spec.Schedule, err)}
}

// setValid sets the ScheduleValid condition and reports whether a Warning tells it: the
// schedule became invalid, or invalid for another reason.
func setValid(status *musterv1.FleetCronJobStatus, generation int64, v validity) bool {
	// A copy: SetStatusCondition changes the condition in place.
	var was *metav1.Condition
	if c := meta.FindStatusCondition(status.Conditions, musterv1.FleetCronJobScheduleValid); c != nil {
		was = c.DeepCopy()
	}
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: musterv1.FleetCronJobScheduleValid, Status: v.status, Reason: v.reason, Message: v.message, ObservedGeneration: generation})
	return v.status == metav1.ConditionFalse && (was == nil || was.Status != v.status || was.Message != v.message)
}

// track refreshes status.active and lastSuccessfulTime from the children, and moves
// lastScheduleTime up to the slot of the newest run the cron made (ranFor): a pass that
// creates a slot's run leaves recording the slot to the pass the creation brings, and a
// replica may die in between, so a run whose slot was not recorded must not run again if
// it is deleted before the next pass. It never moves back, so deleting runs never brings
// their slots back.
func track(status *musterv1.FleetCronJobStatus, cj *musterv1.FleetCronJob, children []child, horizon time.Time) {
	status.Active = nil
	for _, c := range activeChildren(children) {
		status.Active = append(status.Active, reference(c.obj))
	}
	for _, c := range children {
		if ranFor(cj, c, horizon) {
			recordSchedule(status, c.scheduled)
		}
		if c.succeeded && c.completed != nil && (status.LastSuccessfulTime == nil || status.LastSuccessfulTime.Before(c.completed)) {
			status.LastSuccessfulTime = c.completed.DeepCopy()
		}
	}
}

// ranFor reports whether a run says which slot of the cron ran: its annotation names a
// slot no later than horizon, and it holds one of that slot's names. Anyone who may edit
// FleetJobs can rewrite the annotation, but not the name: an annotation moved to a later
// slot must not skip the slots before it, nor one years ahead stop the cron.
func ranFor(cj *musterv1.FleetCronJob, c child, horizon time.Time) bool {
	return c.slotKnown && !c.scheduled.After(horizon) && cronapi.NamedFor(cj, c.obj.GetName(), c.scheduled)
}

// recordSchedule stores the slot as the last one run. It is kept in status and never
// moves back, so deleting a child never makes its slot run again.
func recordSchedule(status *musterv1.FleetCronJobStatus, slot time.Time) {
	if status.LastScheduleTime == nil || status.LastScheduleTime.Before(&metav1.Time{Time: slot}) {
		status.LastScheduleTime = &metav1.Time{Time: slot}
	}
}

// leftActive compares the runs the status lists as active with the children now: those
// that finished since, and those that are gone (deleted by someone else: the cron's own
// deletions leave the list before their runs go).
func leftActive(active []corev1.ObjectReference, children []child) (finished []child, missing []corev1.ObjectReference) {
	byUID := make(map[types.UID]child, len(children))
	for _, c := range children {
		byUID[c.obj.GetUID()] = c
	}
	for _, ref := range active {
		c, ok := byUID[ref.UID]
		switch {
		case !ok:
			missing = append(missing, ref)
		case c.finished:
			finished = append(finished, c)
		}
	}
	return finished, missing
}

// beyondHistory is the finished children the history limits do not keep, oldest first.
// A run whose slot the cron's stored status does not record yet stays, whatever the
// limits: it is the only record of its slot until the pass's status write lands, and with
// it gone a hub that crashed before that write would find the slot due and run it again.
func beyondHistory(cj *musterv1.FleetCronJob, children []child) []child {
	var succeeded, failed []child
	for _, c := range children {
		switch {
		case !c.finished || c.obj.GetDeletionTimestamp() != nil || !slotRecorded(cj, c):
		case c.succeeded:
			succeeded = append(succeeded, c)
		default:
			failed = append(failed, c)
		}
	}
	var out []child
	for _, group := range []struct {
		list  []child
		limit int32
	}{
		{succeeded, ptr.Deref(cj.Spec.SuccessfulJobsHistoryLimit, 3)},
		{failed, ptr.Deref(cj.Spec.FailedJobsHistoryLimit, 1)},
	} {
		for i := 0; i < len(group.list)-int(group.limit); i++ {
			out = append(out, group.list[i])
		}
	}
	return out
}

// slotRecorded says whether cj's status, as stored, records c's slot as run: its
// lastScheduleTime is c's slot or later.
func slotRecorded(cj *musterv1.FleetCronJob, c child) bool {
	last := cj.Status.LastScheduleTime
	return last != nil && !c.scheduled.After(last.Time)
}

// slotPlan is what a due slot needs, given the cron's runs.
type slotPlan struct {
	// ran says a run of the slot exists (created before, by this or another replica): the
	// slot is done.
	ran bool
	// blocking counts the active runs that keep the slot from starting (Forbid).
	blocking int
	// replace is the active runs to delete before the slot's run starts (Replace).
	replace []child
}

// decideSlot decides for a due slot, honouring the concurrency policy over the active
// runs anywhere in the fleet.
func decideSlot(cj *musterv1.FleetCronJob, children []child, slot time.Time) slotPlan {
	for _, c := range children {
		if cronapi.NamedFor(cj, c.obj.GetName(), slot) {
			return slotPlan{ran: true}
		}
	}
	active := activeChildren(children)
	switch cj.Spec.ConcurrencyPolicy {
	case musterv1.ConcurrencyForbid:
		return slotPlan{blocking: len(active)}
	case musterv1.ConcurrencyReplace:
		return slotPlan{replace: active}
	}
	return slotPlan{}
}
