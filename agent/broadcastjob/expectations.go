package broadcastjob

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// expectations remember the pods a job's last reconcile created and deleted until the
// informer cache shows them, so that a reconcile working from a stale cache does not count
// too few active pods and exceed parallelism. They expire, so a lost event costs a delay,
// not a stuck job.
type expectations struct {
	mu    sync.Mutex
	ttl   time.Duration
	byJob map[types.NamespacedName]*expected
	now   func() time.Time
}

type expected struct {
	creates map[string]bool
	deletes map[string]bool
	since   time.Time
}

func newExpectations(ttl time.Duration, now func() time.Time) *expectations {
	return &expectations{ttl: ttl, byJob: map[types.NamespacedName]*expected{}, now: now}
}

func (e *expectations) entry(job types.NamespacedName) *expected {
	x, ok := e.byJob[job]
	if !ok {
		x = &expected{creates: map[string]bool{}, deletes: map[string]bool{}}
		e.byJob[job] = x
	}
	x.since = e.now()
	return x
}

// expectCreate and expectDelete record a pod the next reconcile must see (or not see).
func (e *expectations) expectCreate(job types.NamespacedName, pod string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.entry(job).creates[pod] = true
}

func (e *expectations) expectDelete(job types.NamespacedName, pod string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.entry(job).deletes[pod] = true
}

// createFailed drops the expectation of a pod whose creation the API server refused.
func (e *expectations) createFailed(job types.NamespacedName, pod string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.byJob[job]; ok {
		delete(x.creates, pod)
	}
}

// satisfied reports whether pods (the cached pods of the job) reflect every recorded
// creation and deletion; it forgets what they reflect.
func (e *expectations) satisfied(job types.NamespacedName, pods []*corev1.Pod) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.byJob[job]
	if !ok {
		return true
	}
	present := make(map[string]bool, len(pods))
	for _, p := range pods {
		present[p.Name] = p.DeletionTimestamp == nil
	}
	for name := range x.creates {
		if _, seen := present[name]; seen {
			delete(x.creates, name)
		}
	}
	for name := range x.deletes {
		if alive, seen := present[name]; !seen || !alive {
			delete(x.deletes, name)
		}
	}
	if len(x.creates) == 0 && len(x.deletes) == 0 || e.now().Sub(x.since) > e.ttl {
		delete(e.byJob, job)
		return true
	}
	return false
}

// forget drops the expectations of a job that is gone.
func (e *expectations) forget(job types.NamespacedName) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.byJob, job)
}
