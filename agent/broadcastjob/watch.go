package broadcastjob

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// podBatchPeriod is how long a job's pod changes are collected before the job is
// reconciled. A job's pods change in bursts — hundreds created at once, then turning
// Running and Succeeded in waves — and every round reads all of the job's pods and
// nodes; reconciling on each pod change made a 1000-node job take 70–100 rounds, most
// of them repeating the one before. Collecting for a fifth of a second makes that a
// handful per second at most, and delays the job's progress by no more than that.
const podBatchPeriod = 200 * time.Millisecond

// jobSpecChanged lets a job's updates through when they can change what the controller
// does — its spec (generation, which deletion also bumps), labels, or annotations such
// as the terminate request — and drops the rest: most updates are the controller's own
// status writes, and reconciling again on each of them repeated the round just done.
var jobSpecChanged = predicate.Or[client.Object](
	predicate.GenerationChangedPredicate{},
	predicate.AnnotationChangedPredicate{},
	predicate.LabelChangedPredicate{},
)

// podsToJob enqueues the BroadcastJob that controls a pod, period after the pod's
// change: changes arriving in between fold into the same request, because the queue
// keeps the earliest time a waiting item is due.
func podsToJob(period time.Duration) handler.TypedEventHandler[client.Object, reconcile.Request] {
	enqueue := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		for _, o := range objs {
			if key, ok := controllingJob(o); ok {
				q.AddAfter(reconcile.Request{NamespacedName: key}, period)
			}
		}
	}
	return handler.TypedFuncs[client.Object, reconcile.Request]{
		CreateFunc: func(_ context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(q, e.Object)
		},
		UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			// A pod's controller does not change (adoption is not a BroadcastJob's), so the
			// new object names the job.
			enqueue(q, e.ObjectNew)
		},
		DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(q, e.Object)
		},
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(q, e.Object)
		},
	}
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
