// Package fairqueue orders a controller's work queue by namespace, round robin, so that a
// burst of objects in one hub namespace (one tenant) cannot make another namespace's
// objects wait behind it. client-go's work queue keeps its own guarantees (an item is
// queued once, never processed by two workers at once, rate-limited requeues); only the
// order in which waiting items are handed out changes: one from each namespace with work
// in turn, first come first served within a namespace.
package fairqueue

import (
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// New builds the rate-limited queue of the controller named name on a Queue. It has the
// signature of controller-runtime's controller.Options.NewQueue.
func New(name string, rateLimiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	queue := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[reconcile.Request]{Name: name, Queue: &Queue{}})
	delaying := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[reconcile.Request]{Name: name, Queue: queue})
	return workqueue.NewTypedRateLimitingQueueWithConfig(rateLimiter, workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Name: name, DelayingQueue: delaying})
}

// Queue is the storage under client-go's work queue: a FIFO per namespace, and the
// namespaces that have items in the order they are served. The work queue calls it from
// one goroutine at a time, under its own lock. Cluster-scoped requests share the
// namespace "".
type Queue struct {
	turns   []string
	waiting map[string][]reconcile.Request
	size    int
}

var _ workqueue.Queue[reconcile.Request] = &Queue{}

// Touch is called when a queued item is added again; it keeps its place.
func (q *Queue) Touch(reconcile.Request) {}

// Push queues item behind the others of its namespace; a namespace with nothing waiting
// takes the last turn.
func (q *Queue) Push(item reconcile.Request) {
	if q.waiting == nil {
		q.waiting = map[string][]reconcile.Request{}
	}
	ns := item.Namespace
	if len(q.waiting[ns]) == 0 {
		q.turns = append(q.turns, ns)
	}
	q.waiting[ns] = append(q.waiting[ns], item)
	q.size++
}

// Len is the number of waiting items.
func (q *Queue) Len() int { return q.size }

// Pop hands out the oldest item of the namespace whose turn it is; that namespace goes
// to the back of the turns if it has more. The work queue never pops an empty Queue.
func (q *Queue) Pop() reconcile.Request {
	ns := q.turns[0]
	q.turns[0] = ""
	q.turns = q.turns[1:]
	items := q.waiting[ns]
	item := items[0]
	items[0] = reconcile.Request{}
	if items = items[1:]; len(items) > 0 {
		q.waiting[ns] = items
		q.turns = append(q.turns, ns)
	} else {
		delete(q.waiting, ns)
	}
	q.size--
	return item
}

// NewFunc builds a controller's rate-limited queue, as controller.Options.NewQueue does.
type NewFunc = func(name string, rateLimiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request]

// Or returns f, or New when f is nil.
func Or(f NewFunc) NewFunc {
	if f == nil {
		return New
	}
	return f
}
