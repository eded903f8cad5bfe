package expectations_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/musterhq/muster/agent/expectations"
)

const ttl = time.Minute

var (
	job   = types.NamespacedName{Namespace: "ns", Name: "job"}
	other = types.NamespacedName{Namespace: "ns", Name: "other"}
)

// clock is a settable clock for the expiry.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func pod(name string, change ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	for _, c := range change {
		c(p)
	}
	return p
}

func terminating(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)} }

func withFinalizer(f string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Finalizers = append(p.Finalizers, f) }
}

func cache(pods ...*corev1.Pod) []*corev1.Pod { return pods }

// step is one thing a controller does: record writes, or look at its cache.
type step struct {
	record func(e *expectations.Expectations)
	wait   time.Duration
	// cache is checked with Satisfied when record is nil; want is its answer.
	cache []*corev1.Pod
	owner *types.NamespacedName
	want  bool
}

func check(pods []*corev1.Pod, want bool) step { return step{cache: pods, want: want} }

func TestSatisfied(t *testing.T) {
	const fin = "muster.dev/tracking"
	cases := []struct {
		name  string
		steps []step
	}{
		{name: "an owner with nothing recorded is satisfied", steps: []step{check(cache(), true)}},
		{name: "a create is awaited until the cache shows the pod", steps: []step{
			{record: func(e *expectations.Expectations) { e.ExpectCreate(job, "a") }},
			check(cache(), false),
			check(cache(pod("a")), true),
		}},
		{name: "a created pod already terminating in the cache counts as seen", steps: []step{
			{record: func(e *expectations.Expectations) { e.ExpectCreate(job, "a") }},
			check(cache(pod("a", terminating)), true),
		}},
		{name: "a seen create is forgotten, so the pod leaving the cache later does not matter", steps: []step{
			{record: func(e *expectations.Expectations) { e.ExpectCreate(job, "a"); e.ExpectCreate(job, "b") }},
			check(cache(pod("a")), false),
			check(cache(pod("b")), true),
		}},
		{name: "a create the API server refused is not awaited", steps: []step{
			{record: func(e *expectations.Expectations) { e.ExpectCreate(job, "a"); e.CreateFailed(job, "a") }},
			check(cache(), true),
		}},
		{name: "a delete is awaited while the pod is alive in the cache", steps: []step{
			{record: func(e *expectations.Expectations) { e.ExpectDelete(job, "a") }},
			check(cache(pod("a")), false),
			check(cache(pod("a", terminating)), true),
		}},
		{name: "a delete the API server refused is not awaited", steps: []step{
			{record: func(e *expectations.Expectations) { e.ExpectDelete(job, "a"); e.DeleteFailed(job, "a") }},
			check(cache(pod("a")), true),
		}},
		{name: "a delete is satisfied by the pod being gone", steps: []step{
			{record: func(e *expectations.Expectations) { e.ExpectDelete(job, "a") }},
			check(cache(pod("b")), true),
		}},
		{name: "a release is awaited while the cached pod keeps the finalizer", steps: []step{
			{record: func(e *expectations.Expectations) { e.ExpectRelease(job, "a", fin) }},
			check(cache(pod("a", withFinalizer(fin))), false),
			check(cache(pod("a", withFinalizer("other.dev/keep"))), true),
		}},
		{name: "a release is satisfied by the pod being gone", steps: []step{
			{record: func(e *expectations.Expectations) { e.ExpectRelease(job, "a", fin) }},
			check(cache(), true),
		}},
		{name: "a release the API server refused is not awaited", steps: []step{
			{record: func(e *expectations.Expectations) { e.ExpectRelease(job, "a", fin); e.ReleaseFailed(job, "a") }},
			check(cache(pod("a", withFinalizer(fin))), true),
		}},
		{name: "every kind of write must be reflected", steps: []step{
			{record: func(e *expectations.Expectations) {
				e.ExpectCreate(job, "new")
				e.ExpectDelete(job, "old")
				e.ExpectRelease(job, "done", fin)
			}},
			check(cache(pod("new"), pod("old"), pod("done", withFinalizer(fin))), false),
			check(cache(pod("new"), pod("done", withFinalizer(fin))), false),
			check(cache(pod("new"), pod("done")), true),
		}},
		{name: "unseen writes expire after the ttl", steps: []step{
			{record: func(e *expectations.Expectations) { e.ExpectCreate(job, "a") }},
			{wait: ttl},
			check(cache(), false),
			{wait: time.Second},
			check(cache(), true),
		}},
		{name: "an expired owner is forgotten, not awaited again", steps: []step{
			{record: func(e *expectations.Expectations) { e.ExpectCreate(job, "a") }},
			{wait: ttl + time.Second},
			check(cache(), true),
			check(cache(), true),
		}},
		{name: "each new write restarts the expiry", steps: []step{
			{record: func(e *expectations.Expectations) { e.ExpectCreate(job, "a") }},
			{wait: ttl / 2},
			{record: func(e *expectations.Expectations) { e.ExpectDelete(job, "b") }},
			{wait: ttl/2 + time.Second},
			check(cache(pod("b")), false),
			{wait: ttl / 2},
			check(cache(pod("b")), true),
		}},
		{name: "owners are awaited separately", steps: []step{
			{record: func(e *expectations.Expectations) { e.ExpectCreate(job, "a"); e.ExpectCreate(other, "b") }},
			{cache: cache(pod("a")), owner: &other, want: false},
			check(cache(pod("a")), true),
			{cache: cache(pod("b")), owner: &other, want: true},
		}},
		{name: "a forgotten owner is satisfied", steps: []step{
			{record: func(e *expectations.Expectations) { e.ExpectCreate(job, "a"); e.Forget(job) }},
			check(cache(), true),
		}},
		{name: "refusals for an owner with nothing recorded change nothing", steps: []step{
			{record: func(e *expectations.Expectations) {
				e.CreateFailed(job, "a")
				e.DeleteFailed(job, "a")
				e.ReleaseFailed(job, "a")
			}},
			check(cache(), true),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &clock{t: time.Unix(1_000_000, 0)}
			e := expectations.New(ttl, c.now)
			for i, s := range tc.steps {
				switch {
				case s.record != nil:
					s.record(e)
				case s.wait != 0:
					c.advance(s.wait)
				default:
					owner := job
					if s.owner != nil {
						owner = *s.owner
					}
					if got := e.Satisfied(owner, s.cache); got != s.want {
						t.Fatalf("step %d: Satisfied(%s) = %v, want %v", i, owner.Name, got, s.want)
					}
				}
			}
		})
	}
}

// TestConcurrentOwners records and checks from many goroutines at once, as the workers of
// one controller do; run with -race. Every owner ends satisfied once its pods are cached.
func TestConcurrentOwners(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1_000_000, 0)
	e := expectations.New(time.Hour, func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	const owners, pods = 16, 50
	var wg sync.WaitGroup
	for o := range owners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := types.NamespacedName{Namespace: "ns", Name: fmt.Sprint("job-", o)}
			var cached []*corev1.Pod
			for i := range pods {
				name := fmt.Sprint("pod-", i)
				e.ExpectCreate(owner, name)
				e.ExpectCreate(job, fmt.Sprint(owner.Name, "-", name))
				if e.Satisfied(owner, cached) {
					t.Errorf("%s satisfied before %s was cached", owner.Name, name)
				}
				cached = append(cached, pod(name))
			}
			if !e.Satisfied(owner, cached) {
				t.Errorf("%s not satisfied with all its pods cached", owner.Name)
			}
		}()
	}
	wg.Wait()
	var shared []*corev1.Pod
	for o := range owners {
		for i := range pods {
			shared = append(shared, pod(fmt.Sprintf("job-%d-pod-%d", o, i)))
		}
	}
	if e.Satisfied(job, shared[1:]) {
		t.Fatal("the shared owner is satisfied with one of its pods missing")
	}
	if !e.Satisfied(job, shared) {
		t.Fatal("the shared owner is not satisfied although every pod written for it is cached")
	}
}
