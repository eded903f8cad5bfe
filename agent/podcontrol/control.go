package podcontrol

import (
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/agent/expectations"
)

// Control writes the pods of one owner kind. It is a value built per use from the
// reconciler's client and expectations, so a reconciler that gets its client per cluster
// builds it the same way.
type Control struct {
	Client       client.Client
	Expectations *expectations.Expectations
	// Kind is the owners' kind, the label of the pod metrics.
	Kind string
	// SharedReads makes List return the cache's own pods instead of copies. Copying
	// every pod of a large owner on every round is most of a round's cost; a caller that
	// sets it must copy a pod before changing it. Orphans offered to an Adopter are
	// always copies.
	SharedReads bool
}

// forEach runs fn for 0..n-1 concurrently and returns the first error in index order.
func forEach(n int, fn func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = fn(i) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
