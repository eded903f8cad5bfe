package fairqueue_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/musterhq/muster/internal/fairqueue"
)

func req(s string) reconcile.Request {
	ns, name, _ := strings.Cut(s, "/")
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

func TestQueueOrder(t *testing.T) {
	cases := []struct {
		name   string
		pushes []string
		want   []string
	}{
		{"one namespace is first come first served", []string{"a/1", "a/2", "a/3"}, []string{"a/1", "a/2", "a/3"}},
		{"a late namespace is served after one item of the busy one", []string{"a/1", "a/2", "a/3", "b/1"}, []string{"a/1", "b/1", "a/2", "a/3"}},
		{"namespaces take turns", []string{"a/1", "a/2", "b/1", "b/2", "c/1"}, []string{"a/1", "b/1", "c/1", "a/2", "b/2"}},
		{"cluster-scoped requests are one namespace", []string{"/x", "a/1", "/y"}, []string{"/x", "a/1", "/y"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := &fairqueue.Queue{}
			for _, p := range tc.pushes {
				q.Push(req(p))
			}
			var got []string
			for q.Len() > 0 {
				r := q.Pop()
				got = append(got, r.Namespace+"/"+r.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("popped %v, want %v", got, tc.want)
			}
		})
	}
}

// A namespace that empties and fills again waits for the namespaces already queued.
func TestQueueRefilledNamespaceTakesLastTurn(t *testing.T) {
	q := &fairqueue.Queue{}
	q.Push(req("a/1"))
	q.Push(req("b/1"))
	if r := q.Pop(); r.Namespace != "a" {
		t.Fatalf("first pop %v", r)
	}
	q.Push(req("a/2"))
	q.Push(req("c/1"))
	var got []string
	for q.Len() > 0 {
		r := q.Pop()
		got = append(got, r.Namespace+"/"+r.Name)
	}
	if want := []string{"b/1", "a/2", "c/1"}; !slices.Equal(got, want) {
		t.Errorf("popped %v, want %v", got, want)
	}
}

// Through client-go's work queue: a burst of 500 in one namespace delays another
// namespace's item by one, duplicates are still queued once, and an item being processed
// is not handed out again until Done.
func TestNewKeepsWorkQueueGuarantees(t *testing.T) {
	q := fairqueue.New("test", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	for i := range 500 {
		q.Add(req(fmt.Sprintf("busy/%d", i)))
	}
	q.Add(req("busy/0"))
	q.Add(req("quiet/only"))
	if q.Len() != 501 {
		t.Fatalf("Len %d after 501 distinct adds and a duplicate, want 501", q.Len())
	}
	first, _ := q.Get()
	second, _ := q.Get()
	if first != req("busy/0") || second != req("quiet/only") {
		t.Fatalf("got %v then %v, want busy/0 then quiet/only", first, second)
	}
	q.Add(req("busy/0")) // while processing: queued again only after Done
	third, _ := q.Get()
	if third == req("busy/0") {
		t.Fatal("an item being processed was handed out again")
	}
	q.Done(first)
	q.Done(second)
	q.Done(third)
	if q.Len() != 499 {
		t.Errorf("Len %d after Done re-queued busy/0, want 499 (498 waiting and busy/0 again)", q.Len())
	}
}
