package cronjob

import (
	"time"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Every cron on one schedule is due in the same instant, and a busy slot queues hundreds of
// passes at once. The queue serves higher priorities first: a pass that may create a slot's
// run goes ahead of the bookkeeping that children's creations and status changes bring (a
// status write can wait a second; a run that starts late is what users notice).
const (
	slotPriority        = 10
	bookkeepingPriority = 0
)

// soonest is the shortest wait a pass asks for: a zero wait would ask for no pass at all.
const soonest = time.Nanosecond

// nextPass brings the cron back at its next slot. The wait is measured from when the pass
// ends (now), not from when it began: a pass slowed by a busy API server must not make the
// next slot late by as long. A slot already past when the pass ends is served at once.
func nextPass(next, now time.Time) ctrl.Result {
	return ctrl.Result{RequeueAfter: max(next.Sub(now), soonest), Priority: ptr.To(slotPriority)}
}

// afterCreate brings the cron back to record the run it created, should the watch of the
// child not bring it sooner; that pass is bookkeeping and waits behind other crons' slots.
func afterCreate() ctrl.Result {
	return ctrl.Result{RequeueAfter: recordRetry, Priority: ptr.To(bookkeepingPriority)}
}
