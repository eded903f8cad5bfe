package shards

import "sync"

// Writers bounds the writes of shards one reconcile has in flight. A placement over a
// thousand members then takes a sixteenth of the round trips one after another would,
// and the API server, not the hub's loop, sets the pace; the hub's client rate limit
// still bounds the rate.
const Writers = 16

// Each runs write(i) for every i below n, at most Writers at once, and returns each
// one's error at its index.
func Each(n int, write func(i int) error) []error {
	errs := make([]error, n)
	slots := make(chan struct{}, Writers)
	var wg sync.WaitGroup
	for i := range n {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			errs[i] = write(i)
		}()
	}
	wg.Wait()
	return errs
}
