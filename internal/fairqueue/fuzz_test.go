package fairqueue

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Whatever the order of adds and hand-outs, the queue loses and duplicates nothing, keeps
// each namespace's items first come first served, and is fair: while a namespace has work
// waiting, no other namespace is served twice before it is served once. ops are read one
// byte each: the high bit hands out an item, otherwise the low bits name the namespace
// (one of five, "" for cluster-scoped) of a new item.
func FuzzQueueIsFairAndLosesNothing(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0x80, 0x80, 0x80, 0x80})
	f.Add([]byte{0, 0, 0, 0, 1, 0x80, 1, 0x80, 0x80, 2, 0x80, 0x80, 0x80})
	f.Add([]byte{4, 3, 2, 1, 0, 0x80, 0x80, 4, 0x80, 0x80, 0x80, 0x80, 0x80})
	f.Fuzz(func(t *testing.T, ops []byte) {
		q := &Queue{}
		var want int
		queued := map[string][]string{}             // namespace → names in push order
		othersServed := map[string]map[string]int{} // waiting namespace → others' hand-outs since its last
		for i, op := range ops {
			if op&0x80 == 0 {
				ns := []string{"", "a", "b", "c", "d"}[int(op)%5]
				name := fmt.Sprintf("o%d", i)
				if len(queued[ns]) == 0 {
					othersServed[ns] = map[string]int{}
				}
				q.Push(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
				queued[ns] = append(queued[ns], name)
				want++
				continue
			}
			if q.Len() == 0 {
				continue
			}
			got := q.Pop()
			want--
			ns := got.Namespace
			if len(queued[ns]) == 0 || queued[ns][0] != got.Name {
				t.Fatalf("op %d: handed out %s, but %q's oldest waiting item is %v", i, got, ns, queued[ns])
			}
			queued[ns] = queued[ns][1:]
			othersServed[ns] = map[string]int{}
			for waiting, served := range othersServed {
				if waiting == ns || len(queued[waiting]) == 0 {
					continue
				}
				if served[ns]++; served[ns] > 1 {
					t.Fatalf("op %d: namespace %q served twice while %q waited", i, ns, waiting)
				}
			}
			if q.Len() != want {
				t.Fatalf("op %d: Len() = %d, want %d", i, q.Len(), want)
			}
		}
		for q.Len() > 0 {
			got := q.Pop()
			if len(queued[got.Namespace]) == 0 || queued[got.Namespace][0] != got.Name {
				t.Fatalf("draining: handed out %s out of order (want %v)", got, queued[got.Namespace])
			}
			queued[got.Namespace] = queued[got.Namespace][1:]
		}
		for ns, left := range queued {
			if len(left) > 0 {
				t.Fatalf("namespace %q lost %v", ns, left)
			}
		}
	})
}
