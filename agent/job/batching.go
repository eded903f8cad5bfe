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
// handled at once, and a steady stream still gets one round per Period. Changes that
// trickle in just over Quiet apart would each get a round of their own, so a Job gets at
// most two rounds within any Period: twice upstream's rate of status writes at worst, in
// exchange for not waiting when a Job has nothing else coming. Two, because a round that
// records finished pods releases them, and the round that counts them should follow at
// once.
type batching struct {
	// Period bounds how long a change waits for its round.
	Period time.Duration
	// Quiet is the pause after which the changes so far are handled.
	Quiet time.Duration
}

// jobRounds is what a Job's next round waits for: the first and the latest change since
// its previous round, and when its two previous rounds were, the latest first.
type jobRounds struct {
	first, last time.Time
	previous    [2]time.Time
	pending     bool
}

// roundAt is when the round of a Job with these pending changes runs.
func (b batching) roundAt(j jobRounds) time.Time {
	at := j.last.Add(b.Quiet)
	if deadline := j.first.Add(b.Period); deadline.Before(at) {
		at = deadline
	}
	if earliest := j.previous[1].Add(b.Period); at.Before(earliest) {
		at = earliest
	}
	return at
}

// batcher enqueues the Jobs of one cluster when their rounds are due. It holds a Job only
// while a round is pending or was just run, so what it remembers is bounded by the Jobs
// whose pods are changing.
type batcher struct {
	batching
	now func() time.Time

	mu   sync.Mutex
	jobs map[reconcile.Request]*jobRounds
}

// queue is where a due Job goes: the controller's work queue, as its cluster's event
// handlers see it.
type queue interface{ Add(reconcile.Request) }

func newBatcher(b batching, now func() time.Time) *batcher {
	return &batcher{batching: b, now: now, jobs: map[reconcile.Request]*jobRounds{}}
}

// changed notes a change of the Job key names; the Job is added to q when its round is due.
func (b *batcher) changed(key reconcile.Request, q queue) {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	j, ok := b.jobs[key]
	if !ok {
		j = &jobRounds{}
		b.jobs[key] = j
	}
	j.last = now
	if j.pending {
		// Its timer is armed; when it fires too early it waits again for the new roundAt.
		return
	}
	j.pending, j.first = true, now
	time.AfterFunc(b.roundAt(*j).Sub(now), func() { b.due(key, q) })
}

// due runs when a Job's timer fires: the round starts, or waits on when a later change
// moved it.
func (b *batcher) due(key reconcile.Request, q queue) {
	now := b.now()
	b.mu.Lock()
	j := b.jobs[key]
	if wait := b.roundAt(*j).Sub(now); wait > 0 {
		b.mu.Unlock()
		time.AfterFunc(wait, func() { b.due(key, q) })
		return
	}
	j.pending, j.previous = false, [2]time.Time{now, j.previous[0]}
	b.mu.Unlock()
	time.AfterFunc(b.Period, func() { b.forget(key) })
	q.Add(key)
}

// forget drops a Job whose last round is over a Period ago and has no change pending.
func (b *batcher) forget(key reconcile.Request) {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if j, ok := b.jobs[key]; ok && !j.pending && !now.Before(j.previous[0].Add(b.Period)) {
		delete(b.jobs, key)
	}
}
