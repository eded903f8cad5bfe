package job

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mchandler "sigs.k8s.io/multicluster-runtime/pkg/handler"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/rounds"
)

// roundsOf is the rounds of the cluster named name, as its event handlers see them.
func (r *Reconciler) roundsOf(ctx context.Context, name multicluster.ClusterName) (*rounds.Tracker, bool) {
	c, err := r.clusters.Get(ctx, r.Manager, name)
	if err != nil {
		// Reconcile sorts out a cluster that is gone; the Job is queued at once.
		return nil, false
	}
	return c.rounds, true
}

// inRound adds the Job key names to q for the round that handles its changes. A change
// that frees a pod's slot also adds it Quiet later (the queue keeps a key's earliest
// wait), for the pods that replace those that finished meanwhile, should the round come
// later (see replaceEarly).
func (r *Reconciler) inRound(ctx context.Context, name multicluster.ClusterName, key reconcile.Request, freesSlot bool, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	rs, ok := r.roundsOf(ctx, name)
	if !ok {
		q.Add(key)
		return
	}
	wait := rs.Changed(key.NamespacedName)
	if freesSlot {
		wait = min(wait, rs.Quiet)
	}
	q.AddAfter(key, wait)
}

// atOnce adds the Job key names to q for a round at once.
func (r *Reconciler) atOnce(ctx context.Context, name multicluster.ClusterName, key reconcile.Request, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if rs, ok := r.roundsOf(ctx, name); ok {
		rs.Urgent(key.NamespacedName)
	}
	q.Add(key)
}

// jobChanges enqueues a Job at once when it appears or its spec changes, and in its next
// batched round when only its status or metadata changed: those updates are mostly this
// controller's own writes, and reacting at once would write again for little.
func (r *Reconciler) jobChanges(name multicluster.ClusterName, _ cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
	key := func(o client.Object) reconcile.Request {
		return reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)}
	}
	return mchandler.ForCluster(handler.TypedFuncs[client.Object, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.atOnce(ctx, name, key(e.Object), q)
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.ObjectNew.GetGeneration() != e.ObjectOld.GetGeneration() || e.ObjectNew.GetDeletionTimestamp() != nil {
				r.atOnce(ctx, name, key(e.ObjectNew), q)
				return
			}
			r.inRound(ctx, name, key(e.ObjectNew), false, q)
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.atOnce(ctx, name, key(e.Object), q)
		},
	}, name)
}

// batchedOwner enqueues a pod's Job in its next batched round: the changes of many pods
// share one; a pod that just succeeded also brings the pod that replaces it forward (see
// inRound). A pod no controller owns enqueues the Jobs of its
// cluster that may adopt it.
func (r *Reconciler) batchedOwner(name multicluster.ClusterName, cl cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
	jobs := cl.GetClient()
	enqueue := func(ctx context.Context, o client.Object, succeeded bool, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		ref := metav1.GetControllerOf(o)
		if ref == nil {
			r.enqueueAdopters(ctx, jobs, name, o, q)
			return
		}
		if ref.Kind != "Job" || ref.APIVersion != batchv1.SchemeGroupVersion.String() {
			return
		}
		key := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name}}
		r.inRound(ctx, name, key, succeeded, q)
	}
	return mchandler.ForCluster(handler.TypedFuncs[client.Object, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, false, q)
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.ObjectNew, justSucceeded(e.ObjectOld, e.ObjectNew), q)
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, false, q)
		},
	}, name)
}

// enqueueAdopters enqueues the agent-managed Jobs whose selector matches a pod no
// controller owns: one of them adopts it.
func (r *Reconciler) enqueueAdopters(ctx context.Context, c client.Reader, name multicluster.ClusterName, pod client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if pod.GetDeletionTimestamp() != nil {
		return
	}
	var jobs batchv1.JobList
	if err := c.List(ctx, &jobs, client.InNamespace(pod.GetNamespace())); err != nil {
		log.FromContext(ctx).Error(err, "listing the Jobs that may adopt a pod", "pod", pod.GetName())
		return
	}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if !managedByAgent(job) || job.Spec.Selector == nil {
			continue
		}
		if selector, err := metav1.LabelSelectorAsSelector(job.Spec.Selector); err == nil && !selector.Empty() && selector.Matches(labels.Set(pod.GetLabels())) {
			r.inRound(ctx, name, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(job)}, false, q)
		}
	}
}

func managedByAgent(o client.Object) bool {
	job, ok := o.(*batchv1.Job)
	return ok && ptr.Deref(job.Spec.ManagedBy, "") == musterv1.AgentManagedBy
}

// justSucceeded: the pod's update is its success, which frees its slot for another pod.
func justSucceeded(old, updated client.Object) bool {
	o, ok1 := old.(*corev1.Pod)
	u, ok2 := updated.(*corev1.Pod)
	return ok1 && ok2 && podActive(o) && u.Status.Phase == corev1.PodSucceeded
}
