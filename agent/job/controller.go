// Package job is the agent's Job controller: it runs the batch/v1 Jobs whose
// spec.managedBy is muster.dev/agent, with the behaviour of the Kubernetes v1.36 built-in
// controller (which leaves those Jobs alone) and within the API server's rules for Jobs
// managed by another controller.
package job

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	"github.com/musterhq/muster/agent/expectations"
	"github.com/musterhq/muster/agent/percluster"
	"github.com/musterhq/muster/internal/patch"
	"github.com/musterhq/muster/internal/rounds"
)

// expectationsTTL bounds how long a reconcile waits for the cache to show its writes.
const expectationsTTL = time.Minute

// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=batch,resources=jobs/status,verbs=get;update;patch
// Pods name their Job as controller with blockOwnerDeletion, which clusters running the
// OwnerReferencesPermissionEnforcement admission plugin allow only with this.
// +kubebuilder:rbac:groups=batch,resources=jobs/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;update;patch;delete

// Reconciler runs agent-managed Jobs in the clusters its manager engages: the agent's
// own member, its local cluster. A request names its cluster; the cluster's client,
// recorder, expectations and backoff are a clusterReconciler's.
type Reconciler struct {
	Manager mcmanager.Manager
	Clock   clock.PassiveClock
	// Workers is the number of Jobs reconciled in parallel.
	Workers int
	// BatchPeriod bounds how long a change of a Job's pods or status waits for the round
	// that handles it, so that the changes of many pods are handled, and the status
	// written, once: the built-in controller waits this long (1s) after every change.
	BatchPeriod time.Duration
	// BatchQuiet is the pause in a Job's changes after which they are handled without
	// waiting out BatchPeriod (see rounds.Batching); zero waits BatchPeriod, as upstream.
	BatchQuiet time.Duration
	// RoundDone, when set, is told of every round that read a Job, once the round is over,
	// with the Job as the round left it. It is a seam for tests, which wait on it to know
	// that the controller has seen a change before they check that nothing came of it.
	RoundDone func(*batchv1.Job)
	// HubSilence, when set, is how long the agent has gone without renewing its hub Lease
	// (heartbeat.Renewer.Silence): the measure of the fence on shards whose copies must
	// never run in two clusters at once. Unset, no Job is fenced.
	HubSilence func() time.Duration

	clusters percluster.Store[*clusterReconciler]
}

// clusterReconciler runs the agent-managed Jobs of one cluster.
type clusterReconciler struct {
	Client       client.Client
	Recorder     events.EventRecorder
	Clock        clock.PassiveClock
	expectations *expectations.Expectations
	backoff      *backoffStore
	rounds       *rounds.Tracker
	// refusals paces the status writes of Jobs after the API server refused one as
	// invalid.
	refusals *patch.Refusals
	// roundDone is the Reconciler's RoundDone, or nothing.
	roundDone func(*batchv1.Job)
	// hubSilence is the Reconciler's HubSilence, or nothing.
	hubSilence func() time.Duration
}

// fence is the hub's fence on job now (see fenceOf); none without a measure of silence.
func (r *clusterReconciler) fence(job *batchv1.Job) fence {
	if r.hubSilence == nil {
		return fence{}
	}
	return fenceOf(job, r.hubSilence())
}

func newClusterReconciler(cl cluster.Cluster, clk clock.PassiveClock, b rounds.Batching) *clusterReconciler {
	return &clusterReconciler{
		Client:       cl.GetClient(),
		Recorder:     cl.GetEventRecorder("muster-job"),
		Clock:        clk,
		expectations: expectations.New(expectationsTTL, clk.Now),
		backoff:      newBackoffStore(),
		// Real time, as the work queue's: the tests' clock only moves by hand.
		rounds:   rounds.New(b, clock.RealClock{}),
		refusals: &patch.Refusals{},
	}
}

// batching is the reconciler's BatchPeriod and BatchQuiet.
func (r *Reconciler) batching() rounds.Batching {
	return rounds.Batching{Period: r.BatchPeriod, Quiet: r.BatchQuiet}.Normalized()
}

// SetupWithManager watches agent-managed Jobs and their pods in the local cluster only:
// the provider's clusters are the hub, whose Jobs are not the agent's to run.
func (r *Reconciler) SetupWithManager(mgr mcmanager.Manager) error {
	r.clusters.New = func(cl cluster.Cluster) *clusterReconciler {
		c := newClusterReconciler(cl, r.Clock, r.batching())
		c.roundDone, c.hubSilence = r.RoundDone, r.HubSilence
		return c
	}
	return mcbuilder.ControllerManagedBy(mgr).
		Named("job").
		Watches(&batchv1.Job{}, r.jobChanges, percluster.EngageLocal, percluster.IgnoreProviders,
			mcbuilder.WithPredicates(predicate.NewPredicateFuncs(managedByAgent))).
		Watches(&corev1.Pod{}, r.batchedOwner, percluster.EngageLocal, percluster.IgnoreProviders).
		WithOptions(controller.TypedOptions[mcreconcile.Request]{MaxConcurrentReconciles: max(r.Workers, 1)}).
		Complete(r)
}

// Reconcile runs one round of a Job in the cluster the request names.
func (r *Reconciler) Reconcile(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
	c, err := r.clusters.Get(ctx, r.Manager, req.ClusterName)
	if err != nil {
		return ctrl.Result{}, percluster.IgnoreGone(err)
	}
	return c.Reconcile(ctx, req.Request)
}

// Reconcile runs one round of the Job's life: record the pods that finished, decide
// whether the job ends, bring the active pods to what it needs, and write the status.
// A Job whose changes still wait for their round only gets the pods that replace those
// that succeeded; the round comes back when due.
func (r *clusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if wait := r.rounds.Wait(req.NamespacedName); wait > 0 {
		unseen, err := r.replaceEarly(ctx, req)
		if err != nil {
			return ctrl.Result{}, err
		}
		if unseen {
			// Its last pods are not all in the cache yet: look again soon rather than
			// leave the slots of the pods that succeeded meanwhile to the round.
			wait = min(wait, r.rounds.Quiet)
		}
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	r.rounds.Start(req.NamespacedName)
	job := &batchv1.Job{}
	if err := r.Client.Get(ctx, req.NamespacedName, job); err != nil {
		if apierrors.IsNotFound(err) {
			r.expectations.Forget(req.NamespacedName)
			r.rounds.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if jobFinished(&job.Status) || job.DeletionTimestamp != nil {
		r.refusals.Forget(job.UID)
	}
	if !managedByAgent(job) {
		r.done(job)
		return ctrl.Result{}, nil
	}
	pods, err := r.pods(ctx, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	if jobFinished(&job.Status) {
		r.rounds.Forget(req.NamespacedName)
		defer r.done(job)
		return r.afterFinish(ctx, job, pods)
	}
	if !r.expectations.Satisfied(req.NamespacedName, pods) {
		// The pod events that satisfy them requeue the job; the TTL bounds the wait.
		return ctrl.Result{RequeueAfter: expectationsTTL}, nil
	}
	result, err := r.sync(ctx, job, pods)
	r.done(job)
	if patch.Requeues(err) {
		return patch.Requeue(err)
	}
	return result, err
}

// done tells RoundDone, if set, that a round of job is over.
func (r *clusterReconciler) done(job *batchv1.Job) {
	if r.roundDone != nil {
		r.roundDone(job)
	}
}
