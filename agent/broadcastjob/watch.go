package broadcastjob

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mchandler "sigs.k8s.io/multicluster-runtime/pkg/handler"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/rounds"
)

// DefaultBatchPeriod is how long a job's pod changes are collected before the job is
// reconciled, unless the Reconciler's BatchPeriod says otherwise. A job's pods change in
// bursts — hundreds created at once, then turning Running and Succeeded in waves — and
// every round reads all of the job's pods and nodes; reconciling on each pod change made a
// 1000-node job take 70–100 rounds, most of them repeating the one before. Collecting for
// a fifth of a second makes that a handful per second at most, and delays the job's
// progress by no more than that.
const DefaultBatchPeriod = 200 * time.Millisecond

// jobSpecChanged lets a job's updates through when they can change what the controller
// does — its spec (generation, which deletion also bumps), labels, or annotations such
// as the terminate request — and drops the rest: most updates are the controller's own
// status writes, and reconciling again on each of them repeated the round just done.
var jobSpecChanged = predicate.Or[client.Object](
	predicate.GenerationChangedPredicate{},
	predicate.AnnotationChangedPredicate{},
	predicate.LabelChangedPredicate{},
)

// tracker is the rounds of the cluster named name, as its event handlers see them.
func (r *Reconciler) tracker(ctx context.Context, name multicluster.ClusterName) (*rounds.Tracker, bool) {
	c, err := r.clusters.Get(ctx, r.Manager, name)
	if err != nil {
		// Reconcile sorts out a cluster that is gone; the job is queued at once.
		return nil, false
	}
	return c.rounds, true
}

// inRound adds the job key names to q for the batched round that handles its pods'
// changes: changes arriving in between fold into the same request, because the queue
// keeps the earliest time a waiting item is due.
func (r *Reconciler) inRound(ctx context.Context, name multicluster.ClusterName, key types.NamespacedName, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	req := reconcile.Request{NamespacedName: key}
	rs, ok := r.tracker(ctx, name)
	if !ok {
		q.Add(req)
		return
	}
	q.AddAfter(req, rs.Changed(key))
}

// atOnce adds the job key names to q for a round at once, pod changes pending or not.
func (r *Reconciler) atOnce(ctx context.Context, name multicluster.ClusterName, key types.NamespacedName, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if rs, ok := r.tracker(ctx, name); ok {
		rs.Urgent(key)
	}
	q.Add(reconcile.Request{NamespacedName: key})
}

// jobChanges enqueues a job at once on the changes its predicates let through.
func (r *Reconciler) jobChanges(name multicluster.ClusterName, _ cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
	enqueue := func(ctx context.Context, o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		r.atOnce(ctx, name, client.ObjectKeyFromObject(o), q)
	}
	return onEveryEvent(name, enqueue)
}

// podEvents enqueues the BroadcastJob that controls a pod in its batched round.
func (r *Reconciler) podEvents(name multicluster.ClusterName, _ cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
	enqueue := func(ctx context.Context, o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		if key, ok := controllingJob(o); ok {
			r.inRound(ctx, name, key, q)
		}
	}
	// A pod's controller does not change (adoption is not a BroadcastJob's), so an
	// update's new object names the job.
	return onEveryEvent(name, enqueue)
}

// unfinishedJobs enqueues, at once, every member job of a changed node's cluster still
// running.
func (r *Reconciler) unfinishedJobs(name multicluster.ClusterName, cl cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
	enqueue := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		for _, req := range unfinishedJobsIn(ctx, cl.GetClient()) {
			r.atOnce(ctx, name, req.NamespacedName, q)
		}
	}
	return mchandler.ForCluster(handler.TypedFuncs[client.Object, reconcile.Request]{
		CreateFunc: func(ctx context.Context, _ event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q)
		},
		UpdateFunc: func(ctx context.Context, _ event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q)
		},
		DeleteFunc: func(ctx context.Context, _ event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q)
		},
		GenericFunc: func(ctx context.Context, _ event.TypedGenericEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q)
		},
	}, name)
}

// controllingJob is the BroadcastJob that controls pod, if any.
func controllingJob(o client.Object) (types.NamespacedName, bool) {
	pod, ok := o.(*corev1.Pod)
	if !ok {
		return types.NamespacedName{}, false
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil || ref.Kind != "BroadcastJob" || ref.APIVersion != musterv1.GroupVersion.String() {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: pod.Namespace, Name: ref.Name}, true
}

// onEveryEvent hands the object of every event in cluster name to enqueue: the new object
// of an update.
func onEveryEvent(name multicluster.ClusterName, enqueue func(context.Context, client.Object, workqueue.TypedRateLimitingInterface[reconcile.Request])) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
	return mchandler.ForCluster(handler.TypedFuncs[client.Object, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.ObjectNew, q)
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, q)
		},
		GenericFunc: func(ctx context.Context, e event.TypedGenericEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, q)
		},
	}, name)
}
