// Package fleetjob is the hub's FleetJob controller: it places a batch Job on one cluster,
// on every selected cluster, or divided among them, ships each cluster's shard through a
// Work to the agent's Job controller, and sums up the shards' status.
package fleetjob

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/inventory"
	hubmetrics "github.com/musterhq/muster/hub/metrics"
	"github.com/musterhq/muster/hub/shards"
	"github.com/musterhq/muster/internal/fairqueue"
	"github.com/musterhq/muster/internal/patch"
	"github.com/musterhq/muster/placement/clusters"
)

// +kubebuilder:rbac:groups=muster.dev,resources=fleetjobs,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=muster.dev,resources=fleetjobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=muster.dev,resources=works,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=muster.dev,resources=memberclusters,verbs=get;list;watch

// Reconciler runs FleetJobs.
type Reconciler struct {
	Client client.Client
	// APIReader, when set, reads WorkloadSpreads from the API server before a FleetJob's
	// first placement, so a spread created just before its FleetJob is never missed by a
	// cache that has not seen it yet.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	Inventory *inventory.Inventory
	// UnschedulableWindow is how long an Adaptive WorkloadSpread keeps new pods off a
	// subset whose pods could not be scheduled; zero means DefaultUnschedulableWindow.
	UnschedulableWindow time.Duration
	// NewQueue builds the controller's work queue; nil means fairqueue.New, where hub
	// namespaces take turns so one tenant's burst does not delay another's FleetJobs.
	NewQueue fairqueue.NewFunc
	// PodSecurityLevel is the enforce level of a hub namespace whose labels name none
	// (empty: podsecurity.DefaultLevel); the shards' Works carry their namespace's levels.
	PodSecurityLevel psaapi.Level

	// writes are the FleetJob status writes the cache may not show yet.
	writes patch.Writes
	// refusals paces the status writes of FleetJobs and WorkloadSpreads after the API
	// server refused one as invalid.
	refusals patch.Refusals
}

func (r *Reconciler) unschedulableWindow() time.Duration {
	if r.UnschedulableWindow > 0 {
		return r.UnschedulableWindow
	}
	return DefaultUnschedulableWindow
}

// SetupWithManager watches FleetJobs, their shards' Works, member clusters (a FleetJob
// waiting for an eligible cluster is placed when one appears), and the WorkloadSpreads
// that place FleetJobs.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("fleetjob").
		For(&musterv1.FleetJob{}).
		Watches(&musterv1.Work{}, handler.EnqueueRequestsFromMapFunc(shards.OwnerOf(musterv1.FleetJobNameLabel, musterv1.FleetJobNamespaceLabel))).
		Watches(&musterv1.MemberCluster{}, handler.EnqueueRequestsFromMapFunc(r.unplaced)).
		Watches(&musterv1.WorkloadSpread{}, handler.EnqueueRequestsFromMapFunc(targetOfSpread)).
		WithOptions(controller.Options{NewQueue: fairqueue.Or(r.NewQueue)}).
		Complete(r)
}

func (r *Reconciler) unplaced(ctx context.Context, _ client.Object) []reconcile.Request {
	var list musterv1.FleetJobList
	if err := r.Client.List(ctx, &list); err != nil {
		log.FromContext(ctx).Error(err, "listing FleetJobs for a member cluster change")
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		if !meta.IsStatusConditionTrue(list.Items[i].Status.Conditions, musterv1.FleetJobScheduled) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}

// Reconcile places a FleetJob once, then keeps its status in line with its shards.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	fj := &musterv1.FleetJob{}
	if err := r.Client.Get(ctx, req.NamespacedName, fj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if err := r.writes.Check(fj); err != nil {
		return patch.Requeue(err)
	}
	if fj.DeletionTimestamp != nil {
		r.writes.Forget(fj.UID)
		r.refusals.Forget(fj.UID)
		return r.deleteShards(ctx, fj)
	}
	if err := r.addFinalizer(ctx, fj); err != nil {
		return patch.Requeue(err)
	}
	works, err := r.works(ctx, fj)
	if err != nil {
		return ctrl.Result{}, err
	}
	shards, err := readShards(works)
	if err != nil {
		return ctrl.Result{}, err
	}
	ws, err := r.spreadOf(ctx, fj, works)
	if err != nil {
		return ctrl.Result{}, err
	}
	var scheduled *metav1.Condition
	var requeue time.Duration
	switch {
	case ws != nil:
		res, err := r.placeBySpread(ctx, fj, ws, works, shards)
		if err != nil {
			return patch.Requeue(err)
		}
		works, shards, scheduled, requeue = res.works, res.shards, &res.scheduled, res.requeue
	case len(works) == 0 && !meta.IsStatusConditionTrue(fj.Status.Conditions, musterv1.FleetJobScheduled):
		return r.place(ctx, fj)
	}
	status, stop := summarize(fj, shards, r.Clock.Now())
	if scheduled != nil {
		meta.SetStatusCondition(&status.Conditions, *scheduled)
	}
	news := shardConditions(&status, fj.Status.Conditions, shards, fj.Generation)
	for _, k := range stop {
		if err := r.suspend(ctx, fj, works[k]); err != nil {
			return patch.Requeue(err)
		}
	}
	if err := r.updateStatus(ctx, fj, status); err != nil {
		return patch.Requeue(err)
	}
	// Announced only once the status that reports them is written: a failed write is
	// retried, and its retry finds the same news.
	for _, c := range news {
		log.FromContext(ctx).Info("shards of the FleetJob have a problem in their member clusters", "condition", c.Type, "reason", c.Reason,
			"clusters", troubledClusters(shards, c.Type), "message", c.Message)
		action := "Apply"
		if c.Type == musterv1.FleetJobPodsSchedulable {
			action = "Schedule"
		}
		r.Recorder.Eventf(fj, nil, corev1.EventTypeWarning, c.Reason, action, "%s", c.Message)
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

func (r *Reconciler) addFinalizer(ctx context.Context, fj *musterv1.FleetJob) error {
	h := patch.NewHelper(r.Client, fj)
	if !controllerutil.AddFinalizer(fj, musterv1.ShardsFinalizer) {
		return nil
	}
	if err := h.Patch(ctx, fj); err != nil {
		return fmt.Errorf("adding the shards finalizer: %w", err)
	}
	return nil
}

// place chooses the clusters and writes one Work per shard. The decision is final: the
// shards' completions and index ranges cannot change once their Jobs exist.
func (r *Reconciler) place(ctx context.Context, fj *musterv1.FleetJob) (ctrl.Result, error) {
	var members musterv1.MemberClusterList
	if err := r.Client.List(ctx, &members); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing member clusters: %w", err)
	}
	eligible, excluded := clusters.Eligible(&fj.Spec.Placement.Placement, members.Items)
	fit := map[string]int{}
	if r.Inventory != nil {
		fit = r.Inventory.EligibleCountByCluster(&fj.Spec.Template.Spec.Template.Spec)
	}
	shards := place(fj, eligible, fit)
	status := fj.Status.DeepCopy()
	if len(shards) == 0 {
		hubmetrics.PlacementDecisions.WithLabelValues("FleetJob", hubmetrics.OutcomeNoEligibleClusters).Inc()
		if c := meta.FindStatusCondition(fj.Status.Conditions, musterv1.FleetJobScheduled); c == nil || c.Reason != musterv1.ReasonNoEligibleClusters {
			log.FromContext(ctx).Info("no member cluster can take the FleetJob; it waits for one", "excluded", clusters.DescribeExcluded(excluded))
		}
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{
			Type: musterv1.FleetJobScheduled, Status: metav1.ConditionFalse, Reason: musterv1.ReasonNoEligibleClusters,
			Message: "no member cluster can take the job; " + clusters.DescribeExcluded(excluded), ObservedGeneration: fj.Generation,
		})
		status.Phase = musterv1.JobPending
		return patch.Requeue(r.updateStatus(ctx, fj, *status))
	}
	var works []*musterv1.Work
	var names []string
	for _, s := range shards {
		w, err := newWork(fj, s)
		if err != nil {
			return ctrl.Result{}, err
		}
		works = append(works, w)
		names = append(names, s.cluster)
	}
	if err := r.annotatePodSecurity(ctx, fj, works...); err != nil {
		return ctrl.Result{}, err
	}
	if taken, err := r.nameTaken(ctx, fj, works); err != nil || taken != nil {
		if err != nil {
			return ctrl.Result{}, err
		}
		hubmetrics.PlacementDecisions.WithLabelValues("FleetJob", hubmetrics.OutcomeNameTaken).Inc()
		meta.SetStatusCondition(&status.Conditions, *taken)
		return patch.Requeue(r.updateStatus(ctx, fj, *status))
	}
	var errs []error
	for i, w := range works {
		if err := r.Client.Create(ctx, w); err != nil && !apierrors.IsAlreadyExists(err) {
			errs = append(errs, fmt.Errorf("creating the shard for cluster %s: %w", names[i], err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return ctrl.Result{}, err
	}
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: musterv1.FleetJobScheduled, Status: metav1.ConditionTrue, Reason: musterv1.FleetJobReasonPlaced,
		Message: placedMessage(fj.Spec.Placement.Mode, names), ObservedGeneration: fj.Generation,
	})
	status.Phase = musterv1.JobPending
	hubmetrics.PlacementDecisions.WithLabelValues("FleetJob", hubmetrics.OutcomePlaced).Inc()
	log.FromContext(ctx).V(2).Info("placed the FleetJob", "mode", fj.Spec.Placement.Mode, "clusters", clusters.Names(names))
	r.Recorder.Eventf(fj, nil, corev1.EventTypeNormal, musterv1.FleetJobReasonPlaced, "Place", "%s", placedMessage(fj.Spec.Placement.Mode, names))
	return patch.Requeue(r.updateStatus(ctx, fj, *status))
}

// nameTaken returns a False Scheduled condition, with an event, when another object's
// Work (one made by hand: no other FleetJob's shard has the name) already holds the name
// of one of works; nil when every name is free or fj's.
func (r *Reconciler) nameTaken(ctx context.Context, fj *musterv1.FleetJob, works []*musterv1.Work) (*metav1.Condition, error) {
	taken, err := shards.Taken(ctx, r.Client, works, musterv1.FleetJobUIDLabel)
	if err != nil || taken == nil {
		return nil, err
	}
	owner := "another object"
	if l := taken.Labels; l[musterv1.FleetJobNameLabel] != "" {
		owner = fmt.Sprintf("FleetJob %s/%s", l[musterv1.FleetJobNamespaceLabel], l[musterv1.FleetJobNameLabel])
	}
	msg := fmt.Sprintf("Work %s/%s, which would carry a shard, belongs to %s: delete that Work or rename this FleetJob or its WorkloadSpread subset",
		taken.Namespace, taken.Name, owner)
	if c := meta.FindStatusCondition(fj.Status.Conditions, musterv1.FleetJobScheduled); c == nil || c.Reason != musterv1.ReasonShardNameTaken {
		r.Recorder.Eventf(fj, nil, corev1.EventTypeWarning, musterv1.ReasonShardNameTaken, "Place", "%s", msg)
	}
	return &metav1.Condition{Type: musterv1.FleetJobScheduled, Status: metav1.ConditionFalse, Reason: musterv1.ReasonShardNameTaken, Message: msg, ObservedGeneration: fj.Generation}, nil
}

// suspend stops a shard: its Job is suspended, so its pods are removed without counting
// as failures and its record stays.
func (r *Reconciler) suspend(ctx context.Context, fj *musterv1.FleetJob, w *musterv1.Work) error {
	s, _, err := readWork(w)
	if err != nil {
		return err
	}
	s.suspend = true
	want, err := newWork(fj, s)
	if err != nil {
		return err
	}
	h := patch.NewHelper(r.Client, w)
	w.Spec = want.Spec
	if err := r.annotatePodSecurity(ctx, fj, w); err != nil {
		return err
	}
	if err := h.Patch(ctx, w); err != nil {
		return fmt.Errorf("suspending the shard in %s: %w", s.describe(), err)
	}
	r.Recorder.Eventf(fj, nil, corev1.EventTypeWarning, musterv1.FleetJobReasonShardStopped, "Suspend", "suspended the shard in %s after another shard failed", s.describe())
	return nil
}

// annotatePodSecurity puts the Pod Security labels of fj's namespace on works, for the
// agents to put on the member namespaces they create (see shards.PodSecurityOf).
func (r *Reconciler) annotatePodSecurity(ctx context.Context, fj *musterv1.FleetJob, works ...*musterv1.Work) error {
	value, err := shards.PodSecurityOf(ctx, r.Client, r.PodSecurityLevel, fj.Namespace)
	if err != nil {
		return err
	}
	for _, w := range works {
		shards.SetPodSecurity(w, value)
	}
	return nil
}

func (r *Reconciler) works(ctx context.Context, fj *musterv1.FleetJob) (map[string]*musterv1.Work, error) {
	return shards.Works(ctx, r.Client, musterv1.FleetJobUIDLabel, fj.UID)
}

// updateStatus writes status when it changed, then announces the FleetJob's end.
func (r *Reconciler) updateStatus(ctx context.Context, fj *musterv1.FleetJob, status musterv1.FleetJobStatus) error {
	wasFinished := finishedFleet(&fj.Status)
	h := patch.NewHelper(r.Client, fj, patch.Tracked(&r.writes), patch.Paced(&r.refusals, r.Recorder))
	fj.Status = status
	if err := h.Patch(ctx, fj); err != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	if !wasFinished && finishedFleet(&status) {
		for _, t := range []string{musterv1.FleetJobComplete, musterv1.FleetJobFailed} {
			if c := meta.FindStatusCondition(status.Conditions, t); c != nil && c.Status == metav1.ConditionTrue {
				eventType := corev1.EventTypeNormal
				if t == musterv1.FleetJobFailed {
					eventType = corev1.EventTypeWarning
				}
				r.Recorder.Eventf(fj, nil, eventType, c.Reason, t, "%s", c.Message)
			}
		}
	}
	return nil
}

// deleteShards deletes the FleetJob's Works; each agent deletes its Job and pods before
// its Work goes. The finalizer comes off once every Work is gone.
func (r *Reconciler) deleteShards(ctx context.Context, fj *musterv1.FleetJob) (ctrl.Result, error) {
	done, err := shards.Release(ctx, r.Client, fj, musterv1.FleetJobUIDLabel)
	if err != nil || done {
		return patch.Requeue(err)
	}
	// The Works' deletion events bring the FleetJob back; the requeue covers a lost one.
	return ctrl.Result{RequeueAfter: 10 * time.Second}, nil
}
