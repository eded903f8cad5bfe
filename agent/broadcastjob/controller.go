// Package broadcastjob is the agent's BroadcastJob controller: it runs one pod to
// completion on every eligible node of its member cluster, for BroadcastJobs created in
// the member directly or shipped there by the hub as one cluster's shard.
package broadcastjob

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	"github.com/musterhq/muster/agent/expectations"
	"github.com/musterhq/muster/agent/percluster"
	"github.com/musterhq/muster/agent/podcontrol"
	bcj "github.com/musterhq/muster/api/broadcastjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	bcjwrite "github.com/musterhq/muster/internal/broadcastjob"
	"github.com/musterhq/muster/internal/patch"
	"github.com/musterhq/muster/internal/rounds"
)

// expectationsTTL bounds how long a reconcile waits for the cache to show its own writes.
const expectationsTTL = time.Minute

// +kubebuilder:rbac:groups=muster.dev,resources=broadcastjobs,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=muster.dev,resources=broadcastjobs/status,verbs=get;update;patch
// Pods name their BroadcastJob as controller with blockOwnerDeletion, which clusters
// running the OwnerReferencesPermissionEnforcement admission plugin allow only with this.
// +kubebuilder:rbac:groups=muster.dev,resources=broadcastjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch

// Reconciler runs member BroadcastJobs in the clusters its manager engages: the agent's
// own member, its local cluster. A request names its cluster; the cluster's client,
// recorder and expectations are a clusterReconciler's.
type Reconciler struct {
	Manager mcmanager.Manager
	Clock   clock.PassiveClock
	// Workers is the number of jobs reconciled in parallel.
	Workers int
	// Binding is how pods are put on their nodes (default BindingAuto).
	Binding Binding
	// BatchPeriod bounds how long a change of a job's pods waits for the round that handles
	// it (default DefaultBatchPeriod); BatchQuiet is the pause in those changes after which
	// they are handled sooner (default 0: they wait BatchPeriod). See rounds.Batching.
	BatchPeriod time.Duration
	BatchQuiet  time.Duration
	// RoundDone, when set, is told of every round that read a job and acted on it, once
	// the round is over, with the job as the round read it. It is a seam for tests, which
	// wait on it to know that the controller has seen a change before they check that
	// nothing came of it.
	RoundDone func(*musterv1.BroadcastJob)

	clusters percluster.Store[*clusterReconciler]
}

// clusterReconciler runs the member BroadcastJobs of one cluster.
type clusterReconciler struct {
	Client       client.Client
	Recorder     events.EventRecorder
	Clock        clock.PassiveClock
	Binding      Binding
	expectations *expectations.Expectations
	rounds       *rounds.Tracker
	roundDone    func(*musterv1.BroadcastJob)
	// refusals paces the writes of jobs after the API server refused one as invalid.
	refusals *patch.Refusals
}

func newClusterReconciler(cl cluster.Cluster, clk clock.PassiveClock, binding Binding, b rounds.Batching) *clusterReconciler {
	return &clusterReconciler{
		Client:       cl.GetClient(),
		Recorder:     cl.GetEventRecorder("muster-broadcastjob"),
		Clock:        clk,
		Binding:      binding,
		expectations: expectations.New(expectationsTTL, clk.Now),
		// Real time, as the work queue's: the tests' clock only moves by hand.
		rounds:   rounds.New(b, clock.RealClock{}),
		refusals: &patch.Refusals{},
	}
}

func (r *clusterReconciler) writer() bcjwrite.Writer {
	return bcjwrite.Writer{Client: r.Client, Recorder: r.Recorder, Refusals: r.refusals}
}

// SetupWithManager watches BroadcastJobs, their pods, and the nodes that decide where
// pods go, in the local cluster only: the provider's clusters are the hub, whose
// BroadcastJobs the hub runs.
func (r *Reconciler) SetupWithManager(mgr mcmanager.Manager) error {
	if r.Binding == "" {
		r.Binding = BindingAuto
	}
	if r.BatchPeriod <= 0 {
		r.BatchPeriod = DefaultBatchPeriod
	}
	b := rounds.Batching{Period: r.BatchPeriod, Quiet: r.BatchQuiet}
	r.clusters.New = func(cl cluster.Cluster) *clusterReconciler {
		c := newClusterReconciler(cl, r.Clock, r.Binding, b)
		c.roundDone = r.RoundDone
		return c
	}
	return mcbuilder.ControllerManagedBy(mgr).
		Named("broadcastjob").
		Watches(&musterv1.BroadcastJob{}, r.jobChanges, percluster.EngageLocal, percluster.IgnoreProviders, mcbuilder.WithPredicates(memberLocal, jobSpecChanged)).
		Watches(&corev1.Pod{}, r.podEvents, percluster.EngageLocal, percluster.IgnoreProviders).
		Watches(&corev1.Node{}, r.unfinishedJobs, percluster.EngageLocal, percluster.IgnoreProviders, mcbuilder.WithPredicates(schedulingChanged)).
		WithOptions(controller.TypedOptions[mcreconcile.Request]{MaxConcurrentReconciles: max(r.Workers, 1)}).
		Complete(r)
}

// Reconcile brings one job in the cluster the request names in line with its nodes.
func (r *Reconciler) Reconcile(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
	c, err := r.clusters.Get(ctx, r.Manager, req.ClusterName)
	if err != nil {
		return ctrl.Result{}, percluster.IgnoreGone(err)
	}
	return c.Reconcile(ctx, req.Request)
}

// memberLocal keeps BroadcastJobs without placement: a job with placement belongs to the
// hub.
var memberLocal = predicate.NewPredicateFuncs(func(o client.Object) bool {
	job, ok := o.(*musterv1.BroadcastJob)
	return ok && job.Spec.Placement == nil
})

// schedulingChanged ignores node updates that cannot change where pods go (heartbeats,
// image lists): without it every node status report would wake every job.
var schedulingChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, ok1 := e.ObjectOld.(*corev1.Node)
		cur, ok2 := e.ObjectNew.(*corev1.Node)
		if !ok1 || !ok2 {
			return true
		}
		return !equality.Semantic.DeepEqual(old.Labels, cur.Labels) ||
			!equality.Semantic.DeepEqual(old.Spec.Taints, cur.Spec.Taints) ||
			old.Spec.Unschedulable != cur.Spec.Unschedulable ||
			!equality.Semantic.DeepEqual(old.Status.Allocatable, cur.Status.Allocatable) ||
			nodeReady(old) != nodeReady(cur)
	},
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func unfinishedJobsIn(ctx context.Context, c client.Reader) []reconcile.Request {
	var jobs musterv1.BroadcastJobList
	if err := c.List(ctx, &jobs); err != nil {
		log.FromContext(ctx).Error(err, "listing BroadcastJobs for a node change")
		return nil
	}
	var reqs []reconcile.Request
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if job.Spec.Placement == nil && !bcj.Finished(&job.Status) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(job)})
		}
	}
	return reqs
}

// Reconcile brings one job's pods and status in line with its nodes. A job whose pods'
// changes still wait for their batched round goes back to wait for the rest.
func (r *clusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if wait := r.rounds.Wait(req.NamespacedName); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	r.rounds.Start(req.NamespacedName)
	logger := log.FromContext(ctx)
	job := &musterv1.BroadcastJob{}
	if err := r.Client.Get(ctx, req.NamespacedName, job); err != nil {
		if apierrors.IsNotFound(err) {
			r.expectations.Forget(req.NamespacedName)
			r.rounds.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	waiting := false
	defer func() {
		if !waiting && r.roundDone != nil {
			r.roundDone(job)
		}
	}()
	if job.Spec.Placement != nil || job.DeletionTimestamp != nil {
		r.refusals.Forget(job.UID)
		r.rounds.Forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	if bcj.Finished(&job.Status) {
		r.refusals.Forget(job.UID)
		r.rounds.Forget(req.NamespacedName)
		return r.deleteAfterTTL(ctx, job)
	}

	pods, err := r.pods(ctx, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !r.expectations.Satisfied(req.NamespacedName, pods) {
		// The pod events that satisfy them requeue the job; the TTL bounds the wait.
		waiting = true
		return ctrl.Result{RequeueAfter: expectationsTTL}, nil
	}
	nodes, err := r.nodes(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}

	p := decide(observed{job: job, nodes: nodes, pods: pods, now: r.Clock.Now()})
	if len(p.held) > 0 {
		logger.V(2).Info("paused: pods on nodes that are gone or no longer fit stay until the job resumes", "pods", len(p.held), "first", klog.KObj(p.held[0]))
	}
	if p.pause {
		// Persisting the pause comes first and alone (no pods are created or deleted in
		// this round): a crash after it leaves a paused job, not a lost one.
		err := r.writer().PauseOnFailure(ctx, job, p.status.Failed, "the job")
		if err == nil {
			// The status says why, so a later round can tell this pause from the user's.
			err = r.writer().UpdateStatus(ctx, job, p.status)
		}
		return patch.Requeue(err)
	}
	for _, pod := range p.restartsExceeded {
		if err := r.stopForRestarts(ctx, job, pod); err != nil {
			return ctrl.Result{}, err
		}
	}
	if err := r.deletePods(ctx, job, p.stop); err != nil {
		return ctrl.Result{}, err
	}
	created, createErr := r.createPods(ctx, job, p.create)
	p.status.Active += created
	if err := r.writer().UpdateStatus(ctx, job, p.status); err != nil {
		// A conflict: the job changed since it was read; its update event brings it back.
		return patch.Requeue(err)
	}
	if createErr != nil {
		return ctrl.Result{}, createErr
	}
	if bcj.Finished(&p.status) {
		logger.Info("BroadcastJob finished", "phase", p.status.Phase, "succeeded", p.status.Succeeded, "failed", p.status.Failed)
		if ttl, ok := bcj.TTLLeft(job, r.Clock.Now()); ok {
			return ctrl.Result{RequeueAfter: max(ttl, time.Second)}, nil
		}
	}
	return ctrl.Result{RequeueAfter: p.requeueAfter}, nil
}

// nodes lists the cluster's nodes. Nodes and pods are read without copies (a round
// copying a large job's pods and nodes spent half its time doing so): nothing in a round
// changes them.
func (r *clusterReconciler) nodes(ctx context.Context) ([]*corev1.Node, error) {
	var nodeList corev1.NodeList
	if err := r.Client.List(ctx, &nodeList, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	nodes := make([]*corev1.Node, len(nodeList.Items))
	for i := range nodeList.Items {
		nodes[i] = &nodeList.Items[i]
	}
	return nodes, nil
}

// pods lists the pods the job controls, found by its UID label. A BroadcastJob adopts no
// orphans.
func (r *clusterReconciler) pods(ctx context.Context, job *musterv1.BroadcastJob) ([]*corev1.Pod, error) {
	selector := labels.SelectorFromSet(labels.Set{musterv1.BroadcastJobUIDLabel: string(job.UID)})
	return r.podControl().List(ctx, job, selector, nil)
}

// podControl writes the job's pods and records the writes in its expectations.
func (r *clusterReconciler) podControl() podcontrol.Control {
	return podcontrol.Control{Client: r.Client, Expectations: r.expectations, Kind: "BroadcastJob", SharedReads: true}
}

// stopForRestarts ends a pod that restarted more often than restartLimit. The pod is not
// deleted, which would free its node for a new pod: it is marked failed, and a deadline
// makes the kubelet stop its containers.
func (r *clusterReconciler) stopForRestarts(ctx context.Context, job *musterv1.BroadcastJob, cached *corev1.Pod) error {
	pod := cached.DeepCopy() // the round's pods are the cache's own
	patch := client.MergeFrom(cached)
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[musterv1.RestartLimitExceededAnnotation] = strconv.Itoa(int(restarts(pod)))
	deadline := int64(1)
	if pod.Spec.ActiveDeadlineSeconds == nil || *pod.Spec.ActiveDeadlineSeconds > deadline {
		pod.Spec.ActiveDeadlineSeconds = &deadline
	}
	if err := r.Client.Patch(ctx, pod, patch); err != nil {
		return fmt.Errorf("stopping pod %s after %d restarts: %w", pod.Name, restarts(pod), err)
	}
	r.Recorder.Eventf(job, pod, corev1.EventTypeWarning, musterv1.BroadcastJobReasonRestartLimitExceeded, "Stop",
		"pod %s restarted %d times, more than restartLimit %d: counted as failed", pod.Name, restarts(pod), job.Spec.FailurePolicy.RestartLimit)
	return nil
}

// deletePods deletes the pods of nodes the job no longer runs on.
func (r *clusterReconciler) deletePods(ctx context.Context, job *musterv1.BroadcastJob, pods []*corev1.Pod) error {
	deleted, err := r.podControl().Delete(ctx, job, pods, "")
	for _, pod := range deleted {
		r.Recorder.Eventf(job, pod, corev1.EventTypeNormal, musterv1.ReasonSuccessfulDelete, "Delete", "deleted pod %s on node %s", pod.Name, PodNode(pod))
	}
	return err
}

// createPods creates the pods for nodes in slow-start batches: a template that cannot be
// created fails once, not once per node. It returns how many it created; a pod the API
// server refused is not counted.
func (r *clusterReconciler) createPods(ctx context.Context, job *musterv1.BroadcastJob, nodes []string) (int32, error) {
	if len(nodes) == 0 {
		return 0, nil
	}
	direct := r.Binding == BindingAuto
	if why := schedulerNeeded(&job.Spec.Template.Spec); why != "" && direct {
		direct = false
		log.FromContext(ctx).V(2).Info("pods go through the scheduler", "why", why)
	}
	pods := make([]*corev1.Pod, len(nodes))
	for i, node := range nodes {
		pods[i] = newPod(job, node, direct)
	}
	created, err := r.podControl().Create(ctx, job, pods)
	if err != nil {
		r.Recorder.Eventf(job, nil, corev1.EventTypeWarning, musterv1.ReasonFailedCreate, "Create", "%v", err)
		return created, err
	}
	if created > 0 {
		r.Recorder.Eventf(job, nil, corev1.EventTypeNormal, musterv1.ReasonSuccessfulCreate, "Create", "created %d pods", created)
	}
	return created, nil
}

// deleteAfterTTL deletes a finished job once its ttlSecondsAfterFinished passed; its pods
// go with it through their owner references.
func (r *clusterReconciler) deleteAfterTTL(ctx context.Context, job *musterv1.BroadcastJob) (ctrl.Result, error) {
	left, ok := bcj.TTLLeft(job, r.Clock.Now())
	if !ok {
		return ctrl.Result{}, nil
	}
	if left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	policy := client.PropagationPolicy("Background")
	if err := r.Client.Delete(ctx, job, policy, client.Preconditions{UID: &job.UID}); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("deleting the job after its TTL: %w", err)
	}
	log.FromContext(ctx).Info("deleted BroadcastJob after ttlSecondsAfterFinished")
	return ctrl.Result{}, nil
}
