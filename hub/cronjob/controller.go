// Package cronjob is the hub's FleetCronJob controller: it owns the schedules and creates
// FleetJobs or BroadcastJobs on time, with the semantics of the built-in CronJob
// controller counted over the whole fleet.
package cronjob

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"

	bcj "github.com/musterhq/muster/api/broadcastjob"
	"github.com/musterhq/muster/api/names"
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

// child is a FleetJob or BroadcastJob a FleetCronJob created.
type child struct {
	obj client.Object
	// scheduled is the slot the child ran for, from its annotation (slotKnown), else its
	// creation time.
	scheduled time.Time
	slotKnown bool
	finished  bool
	succeeded bool
	completed *metav1.Time
}

// Reconcile runs the slot that is due, if any, and requeues at the next one.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cj := &musterv1.FleetCronJob{}
	if err := r.Client.Get(ctx, req.NamespacedName, cj); err != nil {
		if apierrors.IsNotFound(err) {
			r.terminating.Delete(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if err := r.writes.Check(cj); err != nil {
		return patch.Requeue(err)
	}
	if cj.DeletionTimestamp != nil {
		r.writes.Forget(cj.UID)
		r.terminating.Delete(req.NamespacedName)
		r.refusals.Forget(cj.UID)
		return ctrl.Result{}, nil
	}
	children, err := r.children(ctx, cj)
	if err != nil {
		return ctrl.Result{}, err
	}
	now := r.Clock.Now()
	status := cj.Status.DeepCopy()
	if err := r.reportLeftActive(ctx, cj, children); err != nil {
		return ctrl.Result{}, err
	}
	track(status, children)
	if err := r.cleanHistory(ctx, cj, children); err != nil {
		return patch.Requeue(errors.Join(err, r.writeStatus(ctx, cj, status)))
	}

	sched, runs := r.schedule(cj, status)
	if !runs {
		return patch.Requeue(r.writeStatus(ctx, cj, status))
	}

	var last *time.Time
	if status.LastScheduleTime != nil {
		last = &status.LastScheduleTime.Time
	}
	earliest := earliestConsidered(last, cj.CreationTimestamp.Time, cj.Spec.StartingDeadlineSeconds, now)
	sl, planErr := plan(sched, earliest, now)
	if planErr == nil {
		// Set only once the schedule is known to have a next slot: setting True and then
		// False in one pass would stamp a new transition time (and an event) every pass.
		r.setValid(cj, status, metav1.ConditionTrue, musterv1.FleetCronJobReasonScheduleValid, scheduleValidMessage)
	}
	if sl.missed > tooManyMissed {
		r.Recorder.Eventf(cj, nil, corev1.EventTypeWarning, musterv1.FleetCronJobReasonTooManyMissedTimes, "Schedule",
			"too many missed start times (> %d): only the latest, %s, runs; set or decrease startingDeadlineSeconds or check clock skew", tooManyMissed, sl.due.Format(time.RFC3339))
	}
	if sl.due != nil {
		created, err := r.runSlot(ctx, cj, status, children, *sl.due)
		if err != nil {
			// What the pass learnt about the runs is stored all the same, as the built-in
			// controller does: a cron whose runs cannot be created still shows which ran.
			return patch.Requeue(errors.Join(err, r.writeStatus(ctx, cj, status)))
		}
		if created {
			return r.created(ctx, cj, status, sl.missed)
		}
	}
	if planErr != nil {
		// Nothing will ever be due: say so and wait for the user to edit the schedule,
		// which brings the object back; a timer would only spin.
		r.setValid(cj, status, metav1.ConditionFalse, musterv1.FleetCronJobReasonInvalidSchedule, fmt.Sprintf("schedule %q: %v", cj.Spec.Schedule, planErr))
		status.NextScheduleTime = nil
		return patch.Requeue(r.writeStatus(ctx, cj, status))
	}
	status.NextScheduleTime = &metav1.Time{Time: sl.next}
	if err := r.writeStatus(ctx, cj, status); err != nil {
		return patch.Requeue(err)
	}
	return nextPass(sl.next, r.Clock.Now()), nil
}

const scheduleValidMessage = "the schedule and time zone are valid"

// schedule parses the cron's schedule and reports whether the cron runs: a schedule that
// does not parse (admission should have refused it; if it slipped through, the cron says
// so and waits for a fix) or a suspended cron leaves status saying why and no next run.
func (r *Reconciler) schedule(cj *musterv1.FleetCronJob, status *musterv1.FleetCronJobStatus) (cron.Schedule, bool) {
	sched, err := Parse(cj.Spec.Schedule, ptr.Deref(cj.Spec.TimeZone, ""))
	if err != nil {
		r.setValid(cj, status, metav1.ConditionFalse, musterv1.FleetCronJobReasonInvalidSchedule, err.Error())
		status.NextScheduleTime = nil
		return nil, false
	}
	if ptr.Deref(cj.Spec.Suspend, false) {
		r.setValid(cj, status, metav1.ConditionTrue, musterv1.FleetCronJobReasonScheduleValid, scheduleValidMessage)
		status.NextScheduleTime = nil
		return nil, false
	}
	return sched, true
}

// created ends a pass that created a slot's run, which missed slots were skipped for.
// The slot is recorded on the next pass, which the child's creation triggers (track
// takes lastScheduleTime from the newest child): when many crons share a slot, every
// child is created before any status is written. Only a change of the active runs is
// written now, so that the next pass does not report their finish again, or report a run
// it deleted itself as missing.
func (r *Reconciler) created(ctx context.Context, cj *musterv1.FleetCronJob, status *musterv1.FleetCronJobStatus, missed int) (ctrl.Result, error) {
	if skipped := missed - 1; skipped > 0 {
		// Only the latest of the slots due since the last run runs.
		hubmetrics.CronMissedSlots.WithLabelValues(childKind(cj)).Add(float64(skipped))
	}
	if !equality.Semantic.DeepEqual(cj.Status.Active, status.Active) {
		if err := r.writeStatus(ctx, cj, status); err != nil {
			return patch.Requeue(err)
		}
	}
	return afterCreate(), nil
}

// ChildName is the name the child for a slot gets: the cron's name and the slot in Unix
// minutes. Two hub replicas firing the same slot across a failover create the same
// object, and the API server refuses the second.
func ChildName(cj *musterv1.FleetCronJob, slot time.Time) string {
	return fmt.Sprintf("%s-%d", cj.Name, slot.Unix()/60)
}

// AlternateChildName is the name the child for a slot gets when an object the cron does
// not control holds ChildName (anyone who may create FleetJobs in the namespace can
// guess it): the cron's name (cut to fit), the slot, and a hash of the cron's UID and the
// slot. It is as predictable to the hub as ChildName, so replicas and restarts still
// agree on one child per slot. The child's name becomes its member Jobs', so it leaves
// room for any completion index in the host names of an Indexed run's pods.
func AlternateChildName(cj *musterv1.FleetCronJob, slot time.Time) string {
	minutes := strconv.FormatInt(slot.Unix()/60, 10)
	return names.Name(names.JobMaxLength, cj.Name, minutes, "fleetcronjob-run", string(cj.UID), minutes)
}

// errNamesTaken says neither of a slot's names is free for its child.
var errNamesTaken = errors.New("objects the FleetCronJob does not control hold both names of the run")

// runSlot creates the slot's child unless it exists, honouring the concurrency policy
// over the active children anywhere in the fleet. It says whether it created the child.
func (r *Reconciler) runSlot(ctx context.Context, cj *musterv1.FleetCronJob, status *musterv1.FleetCronJobStatus, children []child, slot time.Time) (bool, error) {
	name, alt := ChildName(cj, slot), AlternateChildName(cj, slot)
	for _, c := range children {
		if n := c.obj.GetName(); n == name || n == alt {
			// Created before (by this or another replica): the slot is done.
			recordSchedule(status, slot)
			return false, nil
		}
	}
	active := activeChildren(children)
	switch cj.Spec.ConcurrencyPolicy {
	case musterv1.ConcurrencyForbid:
		if len(active) > 0 {
			r.Recorder.Eventf(cj, nil, corev1.EventTypeNormal, musterv1.FleetCronJobReasonJobAlreadyActive, "Schedule",
				"not starting the run for %s: concurrencyPolicy Forbid and %d runs are active", slot.Format(time.RFC3339), len(active))
			return false, nil
		}
	case musterv1.ConcurrencyReplace:
		for _, c := range active {
			if err := r.Client.Delete(ctx, c.obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				r.Recorder.Eventf(cj, c.obj, corev1.EventTypeWarning, musterv1.FleetCronJobReasonFailedDelete, "Replace", "deleting active run %s: %v", c.obj.GetName(), err)
				return false, fmt.Errorf("replacing %s: %w", c.obj.GetName(), err)
			}
			r.Recorder.Eventf(cj, c.obj, corev1.EventTypeNormal, musterv1.ReasonSuccessfulDelete, "Replace", "deleted active run %s (concurrencyPolicy Replace)", c.obj.GetName())
			status.Active = slices.DeleteFunc(status.Active, func(ref corev1.ObjectReference) bool { return ref.UID == c.obj.GetUID() })
		}
	}
	began := r.Clock.Now()
	obj, err := r.createRun(ctx, cj, slot, name, alt)
	if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		r.namespaceTerminating(ctx, cj, name, slot, err)
		return false, nil
	}
	if err != nil {
		if !errors.Is(err, errNamesTaken) {
			r.Recorder.Eventf(cj, nil, corev1.EventTypeWarning, musterv1.ReasonFailedCreate, "Create", "creating run %s for %s: %v", name, slot.Format(time.RFC3339), err)
		}
		return false, fmt.Errorf("creating the run for %s: %w", slot.Format(time.RFC3339), err)
	}
	if obj == nil {
		// Not in the cache yet, or created by another replica: the slot is done.
		recordSchedule(status, slot)
		return false, nil
	}
	r.Recorder.Eventf(cj, obj, corev1.EventTypeNormal, musterv1.ReasonSuccessfulCreate, "Create", "created %s for %s", obj.GetName(), slot.Format(time.RFC3339))
	done := r.Clock.Now()
	lag := done.Sub(slot)
	hubmetrics.CronScheduleLag.WithLabelValues(childKind(cj)).Observe(lag.Seconds())
	// Where the lag went: until the create was sent (the wait for a worker and the pass's
	// reads), and the create itself.
	log.FromContext(ctx).V(2).Info("created the run of a slot", "run", obj.GetName(), "slot", slot, "lag", lag,
		"beforeCreate", began.Sub(slot), "create", done.Sub(began))
	return true, nil
}

// createRun creates the slot's child under name or, when an object the cron does not
// control holds name, under alt, and says so in a ChildNameTaken event. It returns the
// child it created; nil when the cron's child for the slot exists already.
func (r *Reconciler) createRun(ctx context.Context, cj *musterv1.FleetCronJob, slot time.Time, name, alt string) (client.Object, error) {
	var taken []string
	for _, n := range []string{name, alt} {
		obj := newChild(cj, n, slot)
		err := r.Client.Create(ctx, obj)
		if err == nil {
			if len(taken) > 0 {
				r.Recorder.Eventf(cj, obj, corev1.EventTypeWarning, musterv1.FleetCronJobReasonChildNameTaken, "Create",
					"%s %s is not this FleetCronJob's: the run for %s is named %s", childKind(cj), name, slot.Format(time.RFC3339), n)
			}
			return obj, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, err
		}
		ours, err := r.controls(ctx, cj, obj)
		if err != nil || ours {
			return nil, err
		}
		log.FromContext(ctx).V(2).Info("an object the cron does not control holds the run's name", "name", n, "slot", slot)
		taken = append(taken, n)
	}
	r.Recorder.Eventf(cj, nil, corev1.EventTypeWarning, musterv1.FleetCronJobReasonChildNameTaken, "Create",
		"%s %s and %s are not this FleetCronJob's: the run for %s cannot be created until one goes", childKind(cj), name, alt, slot.Format(time.RFC3339))
	return nil, errNamesTaken
}

// controls reads, from the API server (the cache may not show the cron's own child yet),
// the object that holds obj's name and says whether cj controls it. One gone since is an
// error: the retry takes the name.
func (r *Reconciler) controls(ctx context.Context, cj *musterv1.FleetCronJob, obj client.Object) (bool, error) {
	cur, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return false, fmt.Errorf("%T is not an object", obj)
	}
	if err := r.apiReader().Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
		return false, fmt.Errorf("reading the holder of the run's name %s: %w", obj.GetName(), err)
	}
	return metav1.IsControlledBy(cur, cj), nil
}

// namespaceTerminating logs, once per cron, that its namespace refused the slot's run
// because it is being deleted. No event is recorded, as by the built-in controller: the
// API server refuses events in that namespace too, so a Warning would only be one more
// refused write and a client-go error line per pass. A namespace being deleted never
// comes back, so the slot is not retried with backoff either (the built-in controller
// does): the pass goes on, writes the status and waits for the next slot, which meets the
// same refusal, until the namespace's deletion reaches the cron.
func (r *Reconciler) namespaceTerminating(ctx context.Context, cj *musterv1.FleetCronJob, name string, slot time.Time, err error) {
	if _, logged := r.terminating.LoadOrStore(client.ObjectKeyFromObject(cj), true); logged {
		return
	}
	log.FromContext(ctx).Info("no run is created until the namespace is gone: it is being deleted", "run", name, "slot", slot, "error", err.Error())
}

// recordSchedule stores the slot as the last one run. It is kept in status and never
// rebuilt from the children, so deleting a child never makes its slot run again.
func recordSchedule(status *musterv1.FleetCronJobStatus, slot time.Time) {
	if status.LastScheduleTime == nil || status.LastScheduleTime.Before(&metav1.Time{Time: slot}) {
		status.LastScheduleTime = &metav1.Time{Time: slot}
	}
}

// childKind is the kind of the runs cj creates.
func childKind(cj *musterv1.FleetCronJob) string {
	if cj.Spec.JobTemplate != nil {
		return "FleetJob"
	}
	return "BroadcastJob"
}

func newChild(cj *musterv1.FleetCronJob, name string, slot time.Time) client.Object {
	var obj client.Object
	var meta metav1.ObjectMeta
	if t := cj.Spec.JobTemplate; t != nil {
		meta = *t.ObjectMeta.DeepCopy()
		obj = &musterv1.FleetJob{Spec: *t.Spec.DeepCopy()}
	} else {
		t := cj.Spec.BroadcastJobTemplate
		meta = *t.ObjectMeta.DeepCopy()
		obj = &musterv1.BroadcastJob{Spec: *t.Spec.DeepCopy()}
	}
	obj.SetName(name)
	obj.SetNamespace(cj.Namespace)
	obj.SetLabels(meta.Labels)
	annotations := meta.Annotations
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[musterv1.ScheduledTimeAnnotation] = slot.UTC().Format(time.RFC3339)
	obj.SetAnnotations(annotations)
	obj.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(cj, musterv1.GroupVersion.WithKind("FleetCronJob"))})
	return obj
}

func reference(obj client.Object) corev1.ObjectReference {
	kind := "FleetJob"
	if _, ok := obj.(*musterv1.BroadcastJob); ok {
		kind = "BroadcastJob"
	}
	return corev1.ObjectReference{APIVersion: musterv1.GroupVersion.String(), Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID()}
}

// children lists the FleetJobs and BroadcastJobs the cron owns, oldest slot first.
func (r *Reconciler) children(ctx context.Context, cj *musterv1.FleetCronJob) ([]child, error) {
	var out []child
	owned := []client.ListOption{client.InNamespace(cj.Namespace), client.MatchingFields{ownerIndex: string(cj.UID)}}
	var fjs musterv1.FleetJobList
	if err := r.Client.List(ctx, &fjs, owned...); err != nil {
		return nil, fmt.Errorf("listing FleetJobs: %w", err)
	}
	for i := range fjs.Items {
		fj := &fjs.Items[i]
		if !metav1.IsControlledBy(fj, cj) {
			continue
		}
		complete := meta.IsStatusConditionTrue(fj.Status.Conditions, musterv1.FleetJobComplete)
		failed := meta.IsStatusConditionTrue(fj.Status.Conditions, musterv1.FleetJobFailed)
		slot, known := scheduledTime(fj)
		out = append(out, child{obj: fj, scheduled: slot, slotKnown: known, finished: complete || failed, succeeded: complete, completed: fj.Status.CompletionTime})
	}
	var bcjs musterv1.BroadcastJobList
	if err := r.Client.List(ctx, &bcjs, owned...); err != nil {
		return nil, fmt.Errorf("listing BroadcastJobs: %w", err)
	}
	for i := range bcjs.Items {
		b := &bcjs.Items[i]
		if !metav1.IsControlledBy(b, cj) {
			continue
		}
		complete := meta.IsStatusConditionTrue(b.Status.Conditions, musterv1.BroadcastJobComplete)
		slot, known := scheduledTime(b)
		out = append(out, child{obj: b, scheduled: slot, slotKnown: known, finished: bcj.Finished(&b.Status), succeeded: complete, completed: b.Status.CompletionTime})
	}
	slices.SortFunc(out, func(a, b child) int {
		return cmp.Or(a.scheduled.Compare(b.scheduled), cmp.Compare(a.obj.GetName(), b.obj.GetName()))
	})
	return out, nil
}

func scheduledTime(o client.Object) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339, o.GetAnnotations()[musterv1.ScheduledTimeAnnotation])
	if err != nil {
		return o.GetCreationTimestamp().Time, false
	}
	return t, true
}

func activeChildren(children []child) []child {
	var out []child
	for _, c := range children {
		if !c.finished && c.obj.GetDeletionTimestamp() == nil {
			out = append(out, c)
		}
	}
	return out
}

// track refreshes status.active and lastSuccessfulTime from the children, and moves
// lastScheduleTime up to the newest child's slot: a child whose creation was not recorded
// (the status write lost a conflict, or the replica died in between) must not run again
// if it is deleted before the next slot. It never moves back, so deleting children never
// brings their slots back.
func track(status *musterv1.FleetCronJobStatus, children []child) {
	status.Active = nil
	for _, c := range activeChildren(children) {
		status.Active = append(status.Active, reference(c.obj))
	}
	for _, c := range children {
		if c.slotKnown {
			recordSchedule(status, c.scheduled)
		}
		if c.succeeded && c.completed != nil && (status.LastSuccessfulTime == nil || status.LastSuccessfulTime.Before(c.completed)) {
			status.LastSuccessfulTime = c.completed.DeepCopy()
		}
	}
}

// reportLeftActive records an event for each run the cron listed as active that has
// finished since (SawCompletedJob) or is gone (MissingJob), as the built-in controller.
func (r *Reconciler) reportLeftActive(ctx context.Context, cj *musterv1.FleetCronJob, children []child) error {
	if finished, missing := leftActive(cj.Status.Active, children); len(finished)+len(missing) == 0 {
		return nil
	}
	// The cache may not show yet the status this controller last wrote, which no longer
	// lists the runs it reported (or deleted): the API server's copy says which are news.
	live := &musterv1.FleetCronJob{}
	if err := r.apiReader().Get(ctx, client.ObjectKeyFromObject(cj), live); apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("reading the FleetCronJob's active runs: %w", err)
	}
	finished, missing := leftActive(live.Status.Active, children)
	for _, c := range finished {
		outcome := "Complete"
		if !c.succeeded {
			outcome = "Failed"
		}
		r.Recorder.Eventf(cj, c.obj, corev1.EventTypeNormal, musterv1.FleetCronJobReasonSawCompletedJob, "Track", "saw run %s finish: %s", c.obj.GetName(), outcome)
	}
	for _, ref := range missing {
		r.Recorder.Eventf(cj, nil, corev1.EventTypeNormal, musterv1.FleetCronJobReasonMissingJob, "Track", "active run %s went missing", ref.Name)
	}
	return nil
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

// cleanHistory deletes the oldest finished children beyond the history limits.
func (r *Reconciler) cleanHistory(ctx context.Context, cj *musterv1.FleetCronJob, children []child) error {
	var succeeded, failed []child
	for _, c := range children {
		switch {
		case !c.finished || c.obj.GetDeletionTimestamp() != nil:
		case c.succeeded:
			succeeded = append(succeeded, c)
		default:
			failed = append(failed, c)
		}
	}
	for _, group := range []struct {
		list  []child
		limit int32
	}{
		{succeeded, ptr.Deref(cj.Spec.SuccessfulJobsHistoryLimit, 3)},
		{failed, ptr.Deref(cj.Spec.FailedJobsHistoryLimit, 1)},
	} {
		for i := 0; i < len(group.list)-int(group.limit); i++ {
			c := group.list[i]
			if err := r.Client.Delete(ctx, c.obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				r.Recorder.Eventf(cj, c.obj, corev1.EventTypeWarning, musterv1.FleetCronJobReasonFailedDelete, "Delete", "deleting finished run %s: %v", c.obj.GetName(), err)
				return fmt.Errorf("deleting old run %s: %w", c.obj.GetName(), err)
			}
			r.Recorder.Eventf(cj, c.obj, corev1.EventTypeNormal, musterv1.ReasonSuccessfulDelete, "Delete", "deleted finished run %s beyond the history limit", c.obj.GetName())
		}
	}
	return nil
}

func (r *Reconciler) setValid(cj *musterv1.FleetCronJob, status *musterv1.FleetCronJobStatus, s metav1.ConditionStatus, reason, msg string) {
	was := meta.FindStatusCondition(status.Conditions, musterv1.FleetCronJobScheduleValid)
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: musterv1.FleetCronJobScheduleValid, Status: s, Reason: reason, Message: msg, ObservedGeneration: cj.Generation})
	if s == metav1.ConditionFalse && (was == nil || was.Status != s || was.Message != msg) {
		r.Recorder.Eventf(cj, nil, corev1.EventTypeWarning, reason, "Schedule", "%s", msg)
	}
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
