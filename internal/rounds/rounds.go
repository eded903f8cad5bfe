// Package rounds times the batched rounds of the agent's workload controllers (Job,
// BroadcastJob): when the changes of an object's pods, collected since its last round,
// are handled together in one round and one status write.
package rounds

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// Batching says when an object's changes are handled. The built-in Job controller handles
// them a fixed second after the first one, so that the changes of many pods, and the status
// write they cause, share one round; the object then waits that second even when nothing
// else is coming. With Quiet below Period they are handled once they pause for Quiet, and
// never later than Period after the first: a burst still shares one round, a change on its
// own is handled at once, and a steady stream still gets one round per Period. Changes that
// trickle in just over Quiet apart would each get a round of their own, so an object gets
// at most two rounds within any Period: twice upstream's rate of status writes at worst, in
// exchange for not waiting when an object has nothing else coming. Two, because a Job round
// that records finished pods releases them, and the round that counts them should follow at
// once. With Quiet at Period or above (or zero: see Normalized) every change waits Period
// after the first of its batch, as upstream.
type Batching struct {
	// Period bounds how long a change waits for its round.
	Period time.Duration
	// Quiet is the pause after which the changes so far are handled.
	Quiet time.Duration
}

// Normalized is b with a Quiet of zero or less meaning Period: a fixed wait, as upstream.
func (b Batching) Normalized() Batching {
	if b.Quiet <= 0 {
		b.Quiet = b.Period
	}
	return b
}

// roundAt is when the round handling an object's pending changes is due: Quiet after the
// last of them, never later than Period after the first, and never sooner than Period after
// the round before the object's latest one. With Quiet at or above Period that last bound
// never holds a round back (the first change came after the latest round), so the round is
// due exactly Period after the first change.
func (b Batching) roundAt(first, last, roundBeforeLatest time.Time) time.Time {
	at := last.Add(min(b.Quiet, b.Period))
	if deadline := first.Add(b.Period); deadline.Before(at) {
		at = deadline
	}
	if earliest := roundBeforeLatest.Add(b.Period); at.Before(earliest) {
		at = earliest
	}
	return at
}

// state is what an object's next round waits for: the first and the latest change since
// its previous round, and when its two previous rounds were, the latest first.
type state struct {
	first, last time.Time
	previous    [2]time.Time
	pending     bool
	// urgent: a change that is handled at once (the object appeared, its spec changed, it
	// is being deleted) came while changes were pending.
	urgent bool
}

// Tracker holds the rounds of one cluster's objects. It only decides; the work queue
// waits: a change adds its object after the time left until its round (Changed), and an
// object whose round a later change postponed goes back to the queue for the rest (Wait);
// the queue keeps the earliest of a key's waits, so a key waits once however many changes
// came.
type Tracker struct {
	Batching
	// clock times the rounds; it is the work queue's (real) time, not the controllers'
	// clock, which tests move by hand.
	clock clock.PassiveClock

	mu      sync.Mutex
	objects map[types.NamespacedName]*state
}

// New returns a Tracker batching by b (normalized), timed by clk.
func New(b Batching, clk clock.PassiveClock) *Tracker {
	return &Tracker{Batching: b.Normalized(), clock: clk, objects: map[types.NamespacedName]*state{}}
}

// Changed notes a change of the object key names and returns how long until its round.
func (t *Tracker) Changed(key types.NamespacedName) time.Duration {
	now := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.object(key)
	if !s.pending {
		s.pending, s.first = true, now
	}
	s.last = now
	return t.roundAt(s.first, s.last, s.previous[1]).Sub(now)
}

// object is the object's entry, made when it has none; the caller holds mu.
func (t *Tracker) object(key types.NamespacedName) *state {
	s, ok := t.objects[key]
	if !ok {
		s = &state{}
		t.objects[key] = s
	}
	return s
}

// Urgent makes the object's next round run when it is next taken from the queue.
func (t *Tracker) Urgent(key types.NamespacedName) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.objects[key]; ok && s.pending {
		s.urgent = true
	}
}

// Wait is how long the object's pending changes still wait for their round; zero when the
// round is due, or when nothing is pending (the object was queued for another reason: its
// own requeue, an urgent change).
func (t *Tracker) Wait(key types.NamespacedName) time.Duration {
	now := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.objects[key]
	if !ok || !s.pending || s.urgent {
		return 0
	}
	return max(t.roundAt(s.first, s.last, s.previous[1]).Sub(now), 0)
}

// Start records that a round of the object begins: the changes so far are its, and those
// that come while it runs wait for the next.
func (t *Tracker) Start(key types.NamespacedName) {
	now := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.object(key)
	s.pending, s.urgent, s.previous = false, false, [2]time.Time{now, s.previous[0]}
}

// Forget drops an object that is gone or finished; a change that comes later starts
// afresh.
func (t *Tracker) Forget(key types.NamespacedName) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.objects, key)
}

// Len is how many objects the Tracker holds.
func (t *Tracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.objects)
}
