package cronjob

import (
	"time"

	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// pass is what one Reconcile changes in the status and has to tell, kept until its end
// writes the status and then records the events.
type pass struct {
	status *musterv1.FleetCronJobStatus
	events []event
	// skipWrite leaves the status unwritten: the pass created a slot's run and the active
	// runs did not change (see created).
	skipWrite bool
	// wake is the next slot, which the cron is requeued for.
	wake *time.Time
}

// event is one event a pass records once its status is written.
type event struct {
	eventType, reason, action, note string
	related                         client.Object
	// recorded says the status write records the news the event tells (a run that left
	// the active list, a schedule found invalid): when the write fails, the event waits
	// for the pass that writes it, which finds the same news.
	recorded bool
}

// tell adds an event about what the pass did or saw.
func (p *pass) tell(eventType, reason, action string, related client.Object, format string, args ...any) {
	p.events = append(p.events, event{eventType: eventType, reason: reason, action: action, related: related, note: fmt.Sprintf(format, args...)})
}

// tellNews adds an event whose news the status write records.
func (p *pass) tellNews(eventType, reason, action string, related client.Object, format string, args ...any) {
	p.tell(eventType, reason, action, related, format, args...)
	p.events[len(p.events)-1].recorded = true
}

// tellLeftActive tells of each run the cron listed as active that has finished since
// (SawCompletedJob) or is gone (MissingJob), as the built-in controller.
func (p *pass) tellLeftActive(finished []child, missing []corev1.ObjectReference) {
	for _, c := range finished {
		outcome := "Complete"
		switch {
		case c.lost:
			outcome = "Failed (evicted from every member cluster)"
		case !c.succeeded:
			outcome = "Failed"
		}
		p.tellNews(corev1.EventTypeNormal, musterv1.FleetCronJobReasonSawCompletedJob, "Track", c.obj, "saw run %s finish: %s", c.obj.GetName(), outcome)
	}
	for _, ref := range missing {
		p.tellNews(corev1.EventTypeNormal, musterv1.FleetCronJobReasonMissingJob, "Track", nil, "active run %s went missing", ref.Name)
	}
}

// setValid sets the ScheduleValid condition, telling it when it is news.
func (p *pass) setValid(cj *musterv1.FleetCronJob, v validity) {
	if setValid(p.status, cj.Generation, v) {
		p.tellNews(corev1.EventTypeWarning, v.reason, "Schedule", nil, "%s", v.message)
	}
}

// announce records the pass's events, all but those whose news the status write that
// failed should have recorded.
func (r *Reconciler) announce(cj *musterv1.FleetCronJob, events []event, written bool) {
	for _, e := range events {
		if e.recorded && !written {
			continue
		}
		if e.related == nil {
			r.Recorder.Eventf(cj, nil, e.eventType, e.reason, e.action, "%s", e.note)
			continue
		}
		r.Recorder.Eventf(cj, e.related, e.eventType, e.reason, e.action, "%s", e.note)
	}
}
