// Package workloadspread is the hub's WorkloadSpread controller, the one writer of a
// spread's status: for the FleetJob a spread places, it reports each subset's replicas,
// room and clusters from the shards the FleetJob controller wrote, and decides each
// subset's Schedulable condition (api/workloadspread.Schedulable) from the pods the
// shards' agents report waiting for a node. The FleetJob controller places the shards,
// taking the same decision read-only from the stored condition; it never writes the spread.
package workloadspread

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/api/workloadspread"
	"github.com/musterhq/muster/hub/shards"
	"github.com/musterhq/muster/internal/fairqueue"
	"github.com/musterhq/muster/internal/patch"
)

// +kubebuilder:rbac:groups=muster.dev,resources=workloadspreads,verbs=get;list;watch
// +kubebuilder:rbac:groups=muster.dev,resources=workloadspreads/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=muster.dev,resources=fleetjobs;works,verbs=get;list;watch

// targetIndex indexes WorkloadSpreads by the name of the FleetJob they target, so a change
// of a FleetJob or of its shards reaches its spread without listing the namespace's.
const targetIndex = "muster.dev/workloadspread-target"

// Reconciler keeps WorkloadSpreads' status.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// UnschedulableWindow is how long an Adaptive spread keeps a subset whose pods could
	// not be scheduled marked unschedulable; zero means
	// workloadspread.DefaultUnschedulableWindow. The FleetJob controller must be given
	// the same.
	UnschedulableWindow time.Duration

	// writes are the status writes the cache may not show yet.
	writes patch.Writes
	// refusals paces the status writes of a spread after the API server refused one as
	// invalid.
	refusals patch.Refusals
}

// SetupWithManager watches WorkloadSpreads, the FleetJobs they target and those
// FleetJobs' shards (their Works, which carry the agents' reports).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &musterv1.WorkloadSpread{}, targetIndex, targetName); err != nil {
		return fmt.Errorf("indexing WorkloadSpreads by target: %w", err)
	}
	if err := shards.IndexWorksByOwner(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("workloadspread").
		For(&musterv1.WorkloadSpread{}).
		Watches(&musterv1.FleetJob{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return r.spreadsOf(ctx, o.GetNamespace(), o.GetName())
		})).
		Watches(&musterv1.Work{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			l := o.GetLabels()
			if l[musterv1.FleetJobNameLabel] == "" {
				return nil
			}
			return r.spreadsOf(ctx, l[musterv1.FleetJobNamespaceLabel], l[musterv1.FleetJobNameLabel])
		})).
		WithOptions(controller.Options{NewQueue: fairqueue.New}).
		Complete(r)
}

func targetName(o client.Object) []string {
	ws, ok := o.(*musterv1.WorkloadSpread)
	if !ok || !targetsFleetJob(ws) {
		return nil
	}
	return []string{ws.Spec.TargetReference.Name}
}

func targetsFleetJob(ws *musterv1.WorkloadSpread) bool {
	ref := ws.Spec.TargetReference
	return ref.Kind == "FleetJob" && ref.APIVersion == musterv1.GroupVersion.String()
}

// spreadsOf are the spreads that target the named FleetJob.
func (r *Reconciler) spreadsOf(ctx context.Context, namespace, name string) []reconcile.Request {
	var list musterv1.WorkloadSpreadList
	if err := r.Client.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{targetIndex: name}); err != nil {
		log.FromContext(ctx).Error(err, "listing the WorkloadSpreads of a FleetJob", "fleetJob", name, "namespace", namespace)
		return nil
	}
	reqs := make([]reconcile.Request, len(list.Items))
	for i := range list.Items {
		reqs[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
	}
	return reqs
}

func (r *Reconciler) window() time.Duration {
	if r.UnschedulableWindow > 0 {
		return r.UnschedulableWindow
	}
	return workloadspread.DefaultUnschedulableWindow
}

// Reconcile reports a spread's subsets. It reads the spread's world (observe), decides
// the status with the pure functions of decide.go, and ends with its one status write,
// then the events that write records; it looks again when a subset's condition may
// change with time alone.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ws := &musterv1.WorkloadSpread{}
	if err := r.Client.Get(ctx, req.NamespacedName, ws); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if err := r.writes.Check(ws); err != nil {
		return patch.Requeue(err)
	}
	if ws.DeletionTimestamp != nil {
		r.writes.Forget(ws.UID)
		r.refusals.Forget(ws.UID)
		return ctrl.Result{}, nil
	}
	snap, err := r.observe(ctx, ws)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !snap.places() {
		// Another placement's shards, a finished job or none at all: the spread has
		// nothing to report, and its status stays as it was.
		return ctrl.Result{}, nil
	}
	return r.record(ctx, ws, decide(ws, snap, workloadspread.StrategyOf(ws, r.window()), r.Clock.Now()))
}

// observe reads the spread's target and the target's shards.
func (r *Reconciler) observe(ctx context.Context, ws *musterv1.WorkloadSpread) (*snapshot, error) {
	snap := &snapshot{}
	if !targetsFleetJob(ws) {
		return snap, nil
	}
	fj := &musterv1.FleetJob{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ws.Namespace, Name: ws.Spec.TargetReference.Name}, fj); apierrors.IsNotFound(err) {
		return snap, nil
	} else if err != nil {
		return nil, fmt.Errorf("reading the target FleetJob: %w", err)
	}
	snap.fj = fj
	works, err := shards.CachedWorks(ctx, r.Client, musterv1.FleetJobUIDLabel, fj.UID)
	if err != nil {
		return nil, err
	}
	for _, w := range works {
		if w.DeletionTimestamp != nil {
			continue
		}
		job, status, err := shards.Decode[batchv1.Job, batchv1.JobStatus](w)
		if job == nil {
			return nil, fmt.Errorf("reading the shard of Work %s/%s: %w", w.Namespace, w.Name, err)
		}
		s := shard{subset: w.Labels[musterv1.SubsetLabel], cluster: w.Labels[musterv1.ClusterNameLabel], status: status}
		if job.Spec.Parallelism != nil {
			s.parallelism = *job.Spec.Parallelism
		}
		snap.shards = append(snap.shards, s)
	}
	return snap, nil
}

// record writes the decided status, then announces the changes it records: a failed
// write is retried, and the retry finds the same news.
func (r *Reconciler) record(ctx context.Context, ws *musterv1.WorkloadSpread, d decision) (ctrl.Result, error) {
	news := schedulableNews(&ws.Status, d.status)
	h := patch.NewHelper(r.Client, ws, patch.Tracked(&r.writes), patch.Paced(&r.refusals, r.Recorder))
	ws.Status = d.status
	if err := h.Patch(ctx, ws); err != nil {
		return patch.Requeue(fmt.Errorf("updating status: %w", err))
	}
	for _, e := range news {
		log.FromContext(ctx).V(2).Info("subset Schedulable changed", "reason", e.reason, "message", e.note)
		r.Recorder.Eventf(ws, nil, e.eventType, e.reason, "Reschedule", "%s", e.note)
	}
	return ctrl.Result{RequeueAfter: d.requeue}, nil
}
