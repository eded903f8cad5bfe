// Package expectations remembers the pod writes a controller made until its informer cache
// shows them, so that a reconcile working from a stale cache neither counts too few pods
// nor counts a pod twice.
package expectations

import (
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Expectations remember, per owner, the pods its last reconcile created, deleted or released
// (removed a finalizer from) until the cache shows it. They expire, so a lost event costs
// a delay, not a stuck owner.
type Expectations struct {
	mu    sync.Mutex
	ttl   time.Duration
	byJob map[types.NamespacedName]*expected
	now   func() time.Time
}

type expected struct {
	creates  map[string]bool
	deletes  map[string]bool
	releases map[string]string
	since    time.Time
}

// New returns Expectations that expire after ttl on the clock now.
func New(ttl time.Duration, now func() time.Time) *Expectations {
	return &Expectations{ttl: ttl, byJob: map[types.NamespacedName]*expected{}, now: now}
}

func (e *Expectations) entry(job types.NamespacedName) *expected {
	x, ok := e.byJob[job]
	if !ok {
		x = &expected{creates: map[string]bool{}, deletes: map[string]bool{}, releases: map[string]string{}}
		e.byJob[job] = x
	}
	x.since = e.now()
	return x
}

// ExpectCreate, ExpectDelete and ExpectRelease record a pod the next reconcile must see
// created, deleted (gone or terminating), or without finalizer.
func (e *Expectations) ExpectCreate(job types.NamespacedName, pod string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.entry(job).creates[pod] = true
}

func (e *Expectations) ExpectDelete(job types.NamespacedName, pod string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.entry(job).deletes[pod] = true
}

// ExpectRelease records that the pod's finalizer was removed.
func (e *Expectations) ExpectRelease(job types.NamespacedName, pod, finalizer string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.entry(job).releases[pod] = finalizer
}

// ReleaseFailed drops the expectation of a finalizer removal the API server refused.
func (e *Expectations) ReleaseFailed(job types.NamespacedName, pod string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.byJob[job]; ok {
		delete(x.releases, pod)
	}
}

// DeleteFailed drops the expectation of a pod whose deletion the API server refused: the
// pod stays alive, and waiting for it to go would only delay the retry.
func (e *Expectations) DeleteFailed(job types.NamespacedName, pod string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.byJob[job]; ok {
		delete(x.deletes, pod)
	}
}

// CreateFailed drops the expectation of a pod whose creation the API server refused.
func (e *Expectations) CreateFailed(job types.NamespacedName, pod string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.byJob[job]; ok {
		delete(x.creates, pod)
	}
}

// Satisfied reports whether pods (the cached pods of the owner) reflect every recorded
// write; it forgets what they reflect.
func (e *Expectations) Satisfied(job types.NamespacedName, pods []*corev1.Pod) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.byJob[job]
	if !ok {
		return true
	}
	present := make(map[string]bool, len(pods))
	byName := make(map[string]*corev1.Pod, len(pods))
	for _, p := range pods {
		present[p.Name] = p.DeletionTimestamp == nil
		byName[p.Name] = p
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
	for name, finalizer := range x.releases {
		if p, seen := byName[name]; !seen || !slices.Contains(p.Finalizers, finalizer) {
			delete(x.releases, name)
		}
	}
	if len(x.creates) == 0 && len(x.deletes) == 0 && len(x.releases) == 0 || e.now().Sub(x.since) > e.ttl {
		delete(e.byJob, job)
		return true
	}
	return false
}

// Forget drops the expectations of an owner that is gone.
func (e *Expectations) Forget(job types.NamespacedName) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.byJob, job)
}
