package dashboard

import "sync"

// changes tells every subscriber that the hub's objects changed. A subscriber's channel
// holds one pending signal at most, so a burst of changes wakes a slow page once.
type changes struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
}

func newChanges() *changes { return &changes{subs: map[chan struct{}]struct{}{}} }

// subscribe returns a channel that receives a signal after each change, and the function
// that ends the subscription.
func (c *changes) subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	c.mu.Lock()
	c.subs[ch] = struct{}{}
	c.mu.Unlock()
	return ch, func() {
		c.mu.Lock()
		delete(c.subs, ch)
		c.mu.Unlock()
	}
}

// notify signals every subscriber without waiting for any.
func (c *changes) notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for ch := range c.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
