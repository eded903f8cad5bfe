// Package cronjob is the hub's FleetCronJob controller: it owns the schedules and creates
// FleetJobs or BroadcastJobs on time, with the semantics of the built-in CronJob
// controller counted over the whole fleet.
package cronjob

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	cronapi "github.com/musterhq/muster/api/cronjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	hubmetrics "github.com/musterhq/muster/hub/metrics"
	"github.com/musterhq/muster/internal/fairqueue"
	"github.com/musterhq/muster/internal/patch"
)

// recordRetry backs up the watch that brings a cron back once its new child is seen.
const recordRetry = 5 * time.Second

// +kubebuilder:rbac:groups=muster.dev,resources=fleetcronjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=muster.dev,resources=fleetcronjobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=muster.dev,resources=fleetjobs;broadcastjobs,verbs=get;list;watch;create;delete

// ownerIndex indexes FleetJobs and BroadcastJobs by the UID of the FleetCronJob that
// controls them, so a reconcile reads its own children and not the namespace's.
const ownerIndex = "muster.dev/fleetcronjob-uid"

// Reconciler runs FleetCronJobs. Clock is injected so tests drive time.
type Reconciler struct {
	Client client.Client
	// APIReader reads around the cache (the manager's, when nil): which runs the cron lists
	// as active is read from the API server before a change of them is reported.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	// Workers is how many FleetCronJobs are reconciled at once (default 1). Every cron on
	// the same schedule is due in the same instant, so this bounds the lag at a busy slot.
	Workers int

	// writes are the cron status writes the cache may not show yet.
	writes patch.Writes
	// terminating holds the crons (by name) whose namespace is being deleted, logged once
	// rather than at every slot until the namespace's deletion reaches them.
	terminating sync.Map
	// refusals paces the status writes of crons after the API server refused one as
	// invalid.
	refusals patch.Refusals
}

// SetupWithManager watches FleetCronJobs and the children they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	for _, obj := range []client.Object{&musterv1.FleetJob{}, &musterv1.BroadcastJob{}} {
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), obj, ownerIndex, cronOwnerUID); err != nil {
			return fmt.Errorf("indexing %T by FleetCronJob: %w", obj, err)
		}
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("fleetcronjob").
		For(&musterv1.FleetCronJob{}).
		Owns(&musterv1.FleetJob{}).
		Owns(&musterv1.BroadcastJob{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1), NewQueue: fairqueue.New}).
		Complete(r)
}

// apiReader reads around the cache; the cache when no API reader was given.
func (r *Reconciler) apiReader() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}

func cronOwnerUID(obj client.Object) []string {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != "FleetCronJob" || ref.APIVersion != musterv1.GroupVersion.String() {
		return nil
	}
	return []string{string(ref.UID)}
}

// Reconcile runs the slot that is due, if any, and requeues at the next one. A pass reads
// the cron and its runs, decides with the pure functions of decide.go, acts, and ends
// (deferred) with one status write and then the events that write records.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
	cj, err := r.open(ctx, req)
	if cj == nil || err != nil {
		return patch.Requeue(err)
	}
	snap, err := r.observe(ctx, cj)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := &pass{status: cj.Status.DeepCopy()}
	defer func() { result, err = r.end(ctx, cj, p, result, err) }()

	p.tellLeftActive(leftActive(snap.listed, snap.children))
	timing := decideTiming(cj, snap.now)
	track(p.status, cj, snap.children, timing.horizon)
	lost, kept := lostRuns(cj, snap.children)
	if err := r.deleteLost(ctx, p, lost); err != nil {
		return ctrl.Result{}, err
	}
	snap.children = kept
	if err := r.deleteHistory(ctx, p, beyondHistory(cj, snap.children)); err != nil {
		return ctrl.Result{}, err
	}
	if timing.stopped != nil {
		// A schedule that does not parse, or a suspended cron: status says why and shows
		// no next run; an edit of the cron brings it back.
		p.setValid(cj, *timing.stopped)
		p.status.NextScheduleTime = nil
		return ctrl.Result{}, nil
	}
	slots, planErr := slotsAt(timing, cj, p.status, snap.now)
	if planErr == nil {
		// Set only once the schedule is known to have a next slot: setting True and then
		// False in one pass would stamp a new transition time (and an event) every pass.
		p.setValid(cj, scheduleValid)
	}
	if slots.Missed > cronapi.TooManyMissed {
		p.tell(corev1.EventTypeWarning, musterv1.FleetCronJobReasonTooManyMissedTimes, "Schedule", nil,
			"too many missed start times (> %d): only the latest, %s, runs; set or decrease startingDeadlineSeconds or check clock skew", cronapi.TooManyMissed, slots.Due.Format(time.RFC3339))
	}
	if slots.Due != nil {
		// A slot that fails still ends with the status write: as with the built-in
		// controller, a cron whose runs cannot be created still shows which ran.
		created, err := r.runSlot(ctx, cj, p, snap.children, *slots.Due)
		if err != nil {
			return ctrl.Result{}, err
		}
		if created {
			return r.created(cj, p, slots.Missed), nil
		}
	}
	if planErr != nil {
		// Nothing will ever be due: say so and wait for the user to edit the schedule,
		// which brings the object back; a timer would only spin.
		p.setValid(cj, noNextSlot(cj, planErr))
		p.status.NextScheduleTime = nil
		return ctrl.Result{}, nil
	}
	p.status.NextScheduleTime = &metav1.Time{Time: slots.Next}
	p.wake = &slots.Next
	return ctrl.Result{}, nil
}

// open reads the cron. It returns nil when the pass has nothing to do: the cron is gone,
// or being deleted (the garbage collector deletes its runs), and then forgets it.
func (r *Reconciler) open(ctx context.Context, req ctrl.Request) (*musterv1.FleetCronJob, error) {
	cj := &musterv1.FleetCronJob{}
	if err := r.Client.Get(ctx, req.NamespacedName, cj); err != nil {
		if apierrors.IsNotFound(err) {
			r.terminating.Delete(req.NamespacedName)
		}
		return nil, client.IgnoreNotFound(err)
	}
	if err := r.writes.Check(cj); err != nil {
		return nil, err
	}
	if cj.DeletionTimestamp != nil {
		r.writes.Forget(cj.UID)
		r.terminating.Delete(req.NamespacedName)
		r.refusals.Forget(cj.UID)
		return nil, nil
	}
	return cj, nil
}

// snapshot is what a pass decides from.
type snapshot struct {
	children []child
	now      time.Time
	// listed is the runs the API server's copy of the cron lists as active, read only
	// when the cache's copy lists runs that have finished or gone since.
	listed []corev1.ObjectReference
}

// observe reads the cron's runs, the time, and which runs it listed as active.
func (r *Reconciler) observe(ctx context.Context, cj *musterv1.FleetCronJob) (snapshot, error) {
	children, err := r.children(ctx, cj)
	if err != nil {
		return snapshot{}, err
	}
	snap := snapshot{children: children, now: r.Clock.Now()}
	if finished, missing := leftActive(cj.Status.Active, children); len(finished)+len(missing) == 0 {
		return snap, nil
	}
	// The cache may not show yet the status this controller last wrote, which no longer
	// lists the runs it reported (or deleted): the API server's copy says which are news.
	live := &musterv1.FleetCronJob{}
	if err := r.apiReader().Get(ctx, client.ObjectKeyFromObject(cj), live); apierrors.IsNotFound(err) {
		return snap, nil
	} else if err != nil {
		return snapshot{}, fmt.Errorf("reading the FleetCronJob's active runs: %w", err)
	}
	snap.listed = live.Status.Active
	return snap, nil
}

// created ends a pass that created a slot's run, which
// missed slots were skipped for. The slot is recorded on the next pass, which the run's
// creation triggers (track takes lastScheduleTime from the newest run): when many crons
// share a slot, every run is created before any status is written. Only a change of the
// active runs is written now, so that the next pass does not report their finish again,
// or report a run it deleted itself as missing.
func (r *Reconciler) created(cj *musterv1.FleetCronJob, p *pass, missed int) ctrl.Result {
	if skipped := missed - 1; skipped > 0 {
		// Only the latest of the slots due since the last run runs.
		hubmetrics.CronMissedSlots.WithLabelValues(childKind(cj)).Add(float64(skipped))
	}
	p.skipWrite = equality.Semantic.DeepEqual(cj.Status.Active, p.status.Active)
	return afterCreate()
}

// end is the deferred end of every pass that read the cron: it writes the status once,
// then records the pass's events, and turns the pass's error into a result.
func (r *Reconciler) end(ctx context.Context, cj *musterv1.FleetCronJob, p *pass, result ctrl.Result, err error) (ctrl.Result, error) {
	var written error
	if !p.skipWrite {
		written = r.writeStatus(ctx, cj, p.status)
	}
	r.announce(cj, p.events, written == nil)
	if err := errors.Join(err, written); err != nil {
		return patch.Requeue(err)
	}
	if p.wake != nil {
		// Measured once the write is done: see nextPass.
		return nextPass(*p.wake, r.Clock.Now()), nil
	}
	return result, nil
}

func (r *Reconciler) writeStatus(ctx context.Context, cj *musterv1.FleetCronJob, status *musterv1.FleetCronJobStatus) error {
	status.ActiveCount = int32(len(status.Active))
	h := patch.NewHelper(r.Client, cj, patch.Tracked(&r.writes), patch.Paced(&r.refusals, r.Recorder))
	cj.Status = *status
	if err := h.Patch(ctx, cj); err != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	return nil
}
