package job

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
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

// roundAt is when the round handling a Job's pending changes is due: Quiet after the last
// of them, never later than Period after the first, and never sooner than Period after
// the round before the Job's latest one.
func (b batching) roundAt(first, last, roundBeforeLatest time.Time) time.Time {
	at := last.Add(min(b.Quiet, b.Period))
	if deadline := first.Add(b.Period); deadline.Before(at) {
		at = deadline
	}
	if earliest := roundBeforeLatest.Add(b.Period); at.Before(earliest) {
		at = earliest
	}
	return at
}

// jobRounds is what a Job's next round waits for: the first and the latest change since
// its previous round, and when its two previous rounds were, the latest first.
type jobRounds struct {
	first, last time.Time
	previous    [2]time.Time
	pending     bool
	// urgent: a change that is handled at once (the Job appeared, its spec changed, it is
	// being deleted) came while changes were pending.
	urgent bool
}

// rounds holds the rounds of one cluster's Jobs. It only decides; the work queue waits: a
// change adds its Job after the time left until its round, and a Job whose round a later
// change postponed goes back to the queue for the rest (the queue keeps the earliest of a
// key's waits, so a key waits once however many changes came).
type rounds struct {
	batching
	// clock times the rounds; it is the work queue's (real) time, not the Jobs' clock,
	// which tests move by hand.
	clock clock.PassiveClock

	mu   sync.Mutex
	jobs map[types.NamespacedName]*jobRounds
}

func newRounds(b batching, clk clock.PassiveClock) *rounds {
	return &rounds{batching: b, clock: clk, jobs: map[types.NamespacedName]*jobRounds{}}
}

// changed notes a change of the Job key names and returns how long until its round.
func (r *rounds) changed(key types.NamespacedName) time.Duration {
	now := r.clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	j := r.job(key)
	if !j.pending {
		j.pending, j.first = true, now
	}
	j.last = now
	return r.roundAt(j.first, j.last, j.previous[1]).Sub(now)
}

// job is the Job's entry, made when it has none; the caller holds mu.
func (r *rounds) job(key types.NamespacedName) *jobRounds {
	j, ok := r.jobs[key]
	if !ok {
		j = &jobRounds{}
		r.jobs[key] = j
	}
	return j
}

// urgent makes the Job's next round run when it is next taken from the queue.
func (r *rounds) urgent(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if j, ok := r.jobs[key]; ok && j.pending {
		j.urgent = true
	}
}

// wait is how long the Job's pending changes still wait for their round; zero when the
// round is due, or when nothing is pending (the Job was queued for another reason: its
// own requeue, an urgent change).
func (r *rounds) wait(key types.NamespacedName) time.Duration {
	now := r.clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	j, ok := r.jobs[key]
	if !ok || !j.pending || j.urgent {
		return 0
	}
	return max(r.roundAt(j.first, j.last, j.previous[1]).Sub(now), 0)
}

// start records that a round of the Job begins: the changes so far are its, and those
// that come while it runs wait for the next.
func (r *rounds) start(key types.NamespacedName) {
	now := r.clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	j := r.job(key)
	j.pending, j.urgent, j.previous = false, false, [2]time.Time{now, j.previous[0]}
}

// forget drops a Job that is gone or finished; a change that comes later starts afresh.
func (r *rounds) forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.jobs, key)
}
