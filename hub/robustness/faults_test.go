package robustness_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// faults decides, for each write the hub makes, whether it fails before the API server
// sees it (429, as Priority and Fairness answers under load), fails after the API server
// applied it (a timeout whose answer is lost), or passes; and it hides the Works the hub
// created from its own cached lists for a while, as an informer that lags its writes.
// Each decision is a function of the seed and of the write (what, which object, which
// attempt at it), not of the order in which the controller's goroutines reach the client:
// a seed replays the same faults on the same writes whatever the interleaving.
type faults struct {
	seed int64
	// before and after are the odds, in percent, of a write failing before or after it is
	// applied; lag is how long a created Work stays out of the hub's cached lists.
	before, after int
	lag           time.Duration

	mu       sync.Mutex
	on       bool
	attempts map[string]int
	created  map[client.ObjectKey]time.Time
	// injected counts the faults by kind, for the run's report.
	injected map[string]int
}

func newFaults(seed int64, before, after int, lag time.Duration) *faults {
	return &faults{seed: seed, before: before, after: after, lag: lag, on: true,
		attempts: map[string]int{}, created: map[client.ObjectKey]time.Time{}, injected: map[string]int{}}
}

// stop ends the faults: the run's last manager works on a healthy API server.
func (f *faults) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.on = false
}

// decide says how the attempt-th write of verb on key goes: "before", "after" or "".
func (f *faults) decide(verb, key string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.on {
		return ""
	}
	id := verb + " " + key
	f.attempts[id]++
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%d", f.seed, id, f.attempts[id])
	roll := int(h.Sum64() % 100)
	switch {
	case roll < f.before:
		f.injected["failed before "+verb]++
		return "before"
	case roll < f.before+f.after:
		f.injected["failed after "+verb]++
		return "after"
	}
	return ""
}

func (f *faults) report() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]int, len(f.injected))
	for k, v := range f.injected {
		out[k] = v
	}
	return out
}

// throttled is the API server's answer to a request Priority and Fairness rejected.
func throttled(verb string) error {
	return apierrors.NewTooManyRequests("injected: the API server is busy ("+verb+")", 1)
}

// lost is a write the API server applied whose answer never came.
func lost(verb string) error {
	return apierrors.NewTimeoutError("injected: the answer to "+verb+" was lost after it was applied", 1)
}

// write runs a write through the faults: refused before, applied then reported failed,
// or passed.
func (f *faults) write(verb, key string, do func() error) error {
	switch f.decide(verb, key) {
	case "before":
		return throttled(verb)
	case "after":
		if err := do(); err != nil {
			return err
		}
		return lost(verb)
	}
	return do()
}

func keyOf(obj client.Object) string {
	return obj.GetNamespace() + "/" + obj.GetName()
}

// client wraps the hub's client: its writes go through the faults and its cached lists
// of Works leave out those it created less than lag ago.
func (f *faults) client(c client.WithWatch) client.WithWatch {
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return f.write("create "+kindOf(obj), keyOf(obj), func() error {
				if err := c.Create(ctx, obj, opts...); err != nil {
					return err
				}
				if _, ok := obj.(*musterv1.Work); ok {
					f.mu.Lock()
					f.created[client.ObjectKeyFromObject(obj)] = time.Now()
					f.mu.Unlock()
				}
				return nil
			})
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return f.write("delete "+kindOf(obj), keyOf(obj), func() error { return c.Delete(ctx, obj, opts...) })
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return f.write("patch "+kindOf(obj), keyOf(obj), func() error { return c.Patch(ctx, obj, patch, opts...) })
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return f.write("update "+kindOf(obj), keyOf(obj), func() error { return c.Update(ctx, obj, opts...) })
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			return f.write("patch "+kindOf(obj)+"/"+sub, keyOf(obj), func() error { return c.SubResource(sub).Patch(ctx, obj, patch, opts...) })
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return f.write("update "+kindOf(obj)+"/"+sub, keyOf(obj), func() error { return c.SubResource(sub).Update(ctx, obj, opts...) })
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := c.List(ctx, list, opts...); err != nil {
				return err
			}
			if works, ok := list.(*musterv1.WorkList); ok {
				f.hideFresh(works)
			}
			return nil
		},
	})
}

// hideFresh drops from works those the hub created less than lag ago.
func (f *faults) hideFresh(works *musterv1.WorkList) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.on || f.lag == 0 {
		return
	}
	kept := works.Items[:0]
	for _, w := range works.Items {
		if at, ok := f.created[client.ObjectKeyFromObject(&w)]; ok && time.Since(at) < f.lag {
			f.injected["Works hidden from a cached list"]++
			continue
		}
		kept = append(kept, w)
	}
	works.Items = kept
}

func kindOf(obj client.Object) string {
	switch obj.(type) {
	case *musterv1.Work:
		return "Work"
	case *musterv1.FleetJob:
		return "FleetJob"
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk == (schema.GroupVersionKind{}) {
		return fmt.Sprintf("%T", obj)
	}
	return gvk.Kind
}
