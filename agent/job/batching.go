package job

import (
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// batching says when a Job's pod and status changes are handled. The built-in controller
// handles them a fixed second after the first one, so that the changes of many pods, and
// the status write they cause, share one round; the Job then waits that second even when
// nothing else is coming. The agent handles them once they pause for Quiet, and never later
// than Period after the first: a burst still shares one round, a change on its own is
// handled at once, and a steady stream still gets one round per Period.
type batching struct {
	// Period bounds how long a change waits for its round.
	Period time.Duration
	// Quiet is the pause after which the changes so far are handled.
	Quiet time.Duration
}

// pendingRound is what a Job's next round waits for: the first and the latest change
// since its last round.
type pendingRound struct {
	first, last time.Time
}

// roundAt is when the round of a Job with these pending changes runs.
func (b batching) roundAt(p pendingRound) time.Time {
	quiet, deadline := p.last.Add(b.Quiet), p.first.Add(b.Period)
	if quiet.Before(deadline) {
		return quiet
	}
	return deadline
}

// batcher enqueues the Jobs of one cluster when their rounds are due. It holds a Job only
// while a round is pending, so what it remembers is bounded by the Jobs whose pods are
// changing.
type batcher struct {
	batching
	now func() time.Time

	mu      sync.Mutex
	pending map[reconcile.Request]*pendingRound
}

// queue is where a due Job goes: the controller's work queue, as its cluster's event
// handlers see it.
type queue interface{ Add(reconcile.Request) }

func newBatcher(b batching, now func() time.Time) *batcher {
	return &batcher{batching: b, now: now, pending: map[reconcile.Request]*pendingRound{}}
}

// changed notes a change of the Job key names; the Job is added to q when its round is due.
func (b *batcher) changed(key reconcile.Request, q queue) {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if p, ok := b.pending[key]; ok {
		// Its timer is armed; when it fires too early it waits again for the new roundAt.
		p.last = now
		return
	}
	p := &pendingRound{first: now, last: now}
	b.pending[key] = p
	time.AfterFunc(b.roundAt(*p).Sub(now), func() { b.due(key, q) })
}

// due runs when a Job's timer fires: the round starts, or waits on when a later change
// moved it.
func (b *batcher) due(key reconcile.Request, q queue) {
	now := b.now()
	b.mu.Lock()
	p := b.pending[key]
	if wait := b.roundAt(*p).Sub(now); wait > 0 {
		b.mu.Unlock()
		time.AfterFunc(wait, func() { b.due(key, q) })
		return
	}
	delete(b.pending, key)
	b.mu.Unlock()
	q.Add(key)
}
