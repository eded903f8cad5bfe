package job

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// batching says when a Job's pod and status changes are handled. The built-in controller
// handles them a fixed second after the first one, so that the changes of many pods, and
// the status write they cause, share one round; the Job then waits that second even when
// nothing else is coming. The agent handles the changes that settle pods (a pod finished,
// or its finish was recorded and released) once they pause for Quiet, and any change never
// later than Period after the first: a burst still shares one round, a pod finishing on
// its own is handled at once, and a steady stream still gets one round per Period. Other
// changes (pods created, bound, running, ready) only move counters, so they wait for the
// next round: a Job with a hundred pods in flight changes without pause, and handling its
// finished pods must not wait for that to stop. Changes that
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

// jobRounds is what a Job's next round waits for: its first change and its latest
// settling one since its previous round (settling says there is one), and when its two
// previous rounds were, the latest first.
type jobRounds struct {
	first, last       time.Time
	previous          [2]time.Time
	pending, settling bool
	// armedAt is when the timer of the pending round fires; timer tells it from timers
	// that an earlier round made stale.
	armedAt time.Time
	timer   uint64
}

// roundAt is when the round of a Job with these pending changes runs.
func (b batching) roundAt(j jobRounds) time.Time {
	at := j.first.Add(b.Period)
	if quiet := j.last.Add(b.Quiet); j.settling && quiet.Before(at) {
		at = quiet
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

// changed notes a change of the Job key names, one that settles pods or not; the Job is
// added to q when its round is due.
func (b *batcher) changed(key reconcile.Request, settles bool, q queue) {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	j, ok := b.jobs[key]
	if !ok {
		j = &jobRounds{}
		b.jobs[key] = j
	}
	if settles {
		j.last = now
	}
	if !j.pending {
		j.pending, j.settling, j.first = true, settles, now
		b.arm(key, j, now, q)
		return
	}
	j.settling = j.settling || settles
	// A timer that fires too early waits again; one that would fire too late is replaced.
	if b.roundAt(*j).Before(j.armedAt) {
		b.arm(key, j, now, q)
	}
}

// arm sets the timer of a Job's pending round; b.mu is held.
func (b *batcher) arm(key reconcile.Request, j *jobRounds, now time.Time, q queue) {
	j.timer++
	j.armedAt = b.roundAt(*j)
	timer := j.timer
	time.AfterFunc(j.armedAt.Sub(now), func() { b.due(key, timer, q) })
}

// due runs when a Job's timer fires: the round starts, or waits on when a later change
// moved it.
func (b *batcher) due(key reconcile.Request, timer uint64, q queue) {
	now := b.now()
	b.mu.Lock()
	j, ok := b.jobs[key]
	if !ok || !j.pending || j.timer != timer {
		b.mu.Unlock()
		return
	}
	if b.roundAt(*j).After(now) {
		b.arm(key, j, now, q)
		b.mu.Unlock()
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

// settles says whether a pod's update changes what a Job must act on rather than only
// what it counts: the pod finished or began terminating, or its tracking finalizer was
// released (the finish is now the Job's to count). Anything but a pod settles.
func settles(old, updated client.Object) bool {
	o, ok1 := old.(*corev1.Pod)
	n, ok2 := updated.(*corev1.Pod)
	if !ok1 || !ok2 {
		return true
	}
	return podActive(o) && !podActive(n) || hasFinalizer(o) && !hasFinalizer(n)
}
