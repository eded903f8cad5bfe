package cronjob

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	cronapi "github.com/musterhq/muster/api/cronjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	hubmetrics "github.com/musterhq/muster/hub/metrics"
)

// errNamesTaken says neither of a slot's names is free for its child.
var errNamesTaken = errors.New("objects the FleetCronJob does not control hold both names of the run")

// runSlot acts on a due slot as decideSlot says: records a slot whose run exists, skips
// one Forbid blocks, deletes the runs Replace stops, and creates the slot's run. It says
// whether it created the run.
func (r *Reconciler) runSlot(ctx context.Context, cj *musterv1.FleetCronJob, p *pass, children []child, slot time.Time) (bool, error) {
	plan := decideSlot(cj, children, slot)
	switch {
	case plan.ran:
		recordSchedule(p.status, slot)
		return false, nil
	case plan.blocking > 0:
		p.tell(corev1.EventTypeNormal, musterv1.FleetCronJobReasonJobAlreadyActive, "Schedule", nil,
			"not starting the run for %s: concurrencyPolicy Forbid and %d runs are active", slot.Format(time.RFC3339), plan.blocking)
		return false, nil
	}
	if err := r.replace(ctx, p, plan.replace); err != nil {
		return false, err
	}
	return r.create(ctx, cj, p, slot)
}

// replace deletes the active runs concurrencyPolicy Replace stops, and takes them off the
// active list: a deletion of the cron's own is never reported as a missing run.
func (r *Reconciler) replace(ctx context.Context, p *pass, runs []child) error {
	for _, c := range runs {
		if err := r.Client.Delete(ctx, c.obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			p.tell(corev1.EventTypeWarning, musterv1.FleetCronJobReasonFailedDelete, "Replace", c.obj, "deleting active run %s: %v", c.obj.GetName(), err)
			return fmt.Errorf("replacing %s: %w", c.obj.GetName(), err)
		}
		p.tell(corev1.EventTypeNormal, musterv1.ReasonSuccessfulDelete, "Replace", c.obj, "deleted active run %s (concurrencyPolicy Replace)", c.obj.GetName())
		p.status.Active = slices.DeleteFunc(p.status.Active, func(ref corev1.ObjectReference) bool { return ref.UID == c.obj.GetUID() })
	}
	return nil
}

// create creates the slot's run and records how late it started. It says whether it
// created the run: not when the cron's run of the slot exists already (the slot is then
// recorded) or the namespace is being deleted.
func (r *Reconciler) create(ctx context.Context, cj *musterv1.FleetCronJob, p *pass, slot time.Time) (bool, error) {
	name, alt := cronapi.ChildName(cj, slot), cronapi.AlternateChildName(cj, slot)
	began := r.Clock.Now()
	obj, err := r.createRun(ctx, cj, p, slot, name, alt)
	if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		r.namespaceTerminating(ctx, cj, name, slot, err)
		return false, nil
	}
	if err != nil {
		if !errors.Is(err, errNamesTaken) {
			p.tell(corev1.EventTypeWarning, musterv1.ReasonFailedCreate, "Create", nil, "creating run %s for %s: %v", name, slot.Format(time.RFC3339), err)
		}
		return false, fmt.Errorf("creating the run for %s: %w", slot.Format(time.RFC3339), err)
	}
	if obj == nil {
		// Not in the cache yet, or created by another replica: the slot is done.
		recordSchedule(p.status, slot)
		return false, nil
	}
	p.tell(corev1.EventTypeNormal, musterv1.ReasonSuccessfulCreate, "Create", obj, "created %s for %s", obj.GetName(), slot.Format(time.RFC3339))
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
func (r *Reconciler) createRun(ctx context.Context, cj *musterv1.FleetCronJob, p *pass, slot time.Time, name, alt string) (client.Object, error) {
	var taken []string
	for _, n := range []string{name, alt} {
		obj := newChild(cj, n, slot)
		err := r.Client.Create(ctx, obj)
		if err == nil {
			if len(taken) > 0 {
				p.tell(corev1.EventTypeWarning, musterv1.FleetCronJobReasonChildNameTaken, "Create", obj,
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
	p.tell(corev1.EventTypeWarning, musterv1.FleetCronJobReasonChildNameTaken, "Create", nil,
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

// deleteHistory deletes the finished runs beyond the history limits.
func (r *Reconciler) deleteHistory(ctx context.Context, p *pass, runs []child) error {
	for _, c := range runs {
		if err := r.Client.Delete(ctx, c.obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			p.tell(corev1.EventTypeWarning, musterv1.FleetCronJobReasonFailedDelete, "Delete", c.obj, "deleting finished run %s: %v", c.obj.GetName(), err)
			return fmt.Errorf("deleting old run %s: %w", c.obj.GetName(), err)
		}
		p.tell(corev1.EventTypeNormal, musterv1.ReasonSuccessfulDelete, "Delete", c.obj, "deleted finished run %s beyond the history limit", c.obj.GetName())
	}
	return nil
}

// deleteLost deletes the runs failover lost: a cluster that comes back would otherwise
// run one again beside the runs the cron started since, which it counts as finished.
func (r *Reconciler) deleteLost(ctx context.Context, p *pass, runs []child) error {
	for _, c := range runs {
		if err := r.Client.Delete(ctx, c.obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			p.tell(corev1.EventTypeWarning, musterv1.FleetCronJobReasonFailedDelete, "Delete", c.obj, "deleting lost run %s: %v", c.obj.GetName(), err)
			return fmt.Errorf("deleting lost run %s: %w", c.obj.GetName(), err)
		}
		p.tell(corev1.EventTypeWarning, musterv1.FleetCronJobReasonLostJob, "Delete", c.obj,
			"deleted run %s: failover evicted it from every member cluster and none can take it; it counts as failed", c.obj.GetName())
	}
	return nil
}
