// Package failover holds what every hub controller that moves work off a member cluster
// shares: since when this hub has watched the fleet (its leader's start, from which a
// NoExecute taint counts at the earliest), the disruption threshold above which nothing
// moves, and a rate limit on evictions, so that the hub never moves the whole fleet's
// work in one instant.
package failover

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/placement/clusters"
)

// Defaults of the hub's flags.
const (
	// DefaultEvictionRate is how many shards the hub evicts per second at most (the node
	// lifecycle controller's --node-eviction-rate is 0.1 nodes per second; a shard is
	// far smaller than a node's pods).
	DefaultEvictionRate = 1.0
	// DefaultUnreachableTolerationSeconds is the toleration of muster.dev/unreachable:
	// NoExecute admission gives a fleet object that has none, as kube-apiserver's
	// DefaultTolerationSeconds gives pods 300 seconds on an unreachable node.
	DefaultUnreachableTolerationSeconds = 300
)

// Gate is consulted before every eviction. Its zero value is not usable: use New.
type Gate struct {
	clock clock.PassiveClock
	// Threshold is the share of a placement's clusters that may be unreachable while
	// work still moves off them (placement/clusters.Disrupted).
	Threshold float64
	// UnreachableTolerationSeconds is how long an object whose placement has no
	// toleration of muster.dev/unreachable:NoExecute tolerates it: admission writes the
	// same default into new objects for people to see, and this covers those it did not
	// reach (created before, admitted while the webhook was down, or edited since).
	UnreachableTolerationSeconds int64
	// Fencing times the fence of work that must never run in two clusters at once.
	Fencing clusters.Fencing
	// Quiet, when set, says whether a cluster's agent has gone quiet for long enough
	// that the gate counts it unreachable before its taint comes (clusters.Disrupted).
	Quiet   func(cluster string) bool
	limiter *rate.Limiter

	mu    sync.Mutex
	since time.Time
}

// New returns a gate that allows perSecond evictions per second (burst 1), holds them while
// more than threshold of a placement's clusters are unreachable, and gives objects without
// a toleration of the unreachable taint one of tolerationSeconds.
func New(c clock.PassiveClock, perSecond, threshold float64, tolerationSeconds int64) *Gate {
	return &Gate{clock: c, Threshold: threshold, UnreachableTolerationSeconds: tolerationSeconds, limiter: rate.NewLimiter(rate.Limit(perSecond), 1)}
}

// Runnable records when this hub became the leader, for the manager to run: a runnable
// without NeedLeaderElection runs only on the leader, so a standby's start does not count.
func (g *Gate) Runnable() manager.RunnableFunc {
	return func(ctx context.Context) error {
		g.mu.Lock()
		g.since = g.clock.Now()
		g.mu.Unlock()
		<-ctx.Done()
		return nil
	}
}

// sinceSet is when the leader's runnable ran, zero before.
func (g *Gate) sinceSet() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.since
}

// Since returns when this hub began to watch; now while the gate has not started (the
// controllers and the gate start together with the leader, in no set order).
func (g *Gate) Since() time.Time {
	if since := g.sinceSet(); !since.IsZero() {
		return since
	}
	return g.clock.Now()
}

// Ready says whether an eviction may be taken now, without spending it: a caller that
// would only be refused does not read the fleet first. The rate is of real time, whatever
// clock the gate was given for since.
func (g *Gate) Ready() bool { return g.limiter.Tokens() >= 1 }

// Take spends one eviction of the rate limit; false means none is left this instant.
func (g *Gate) Take() bool { return g.limiter.Allow() }

// RetryAfter is how soon a caller whose Take failed looks again: when the rate makes the
// next eviction due, and never sooner than a second. Every waiting job wakes then and one
// takes the token, so at a slow rate (the node lifecycle controller's 0.1 per second) the
// jobs wake once per eviction instead of once a second each, and at a fast one no more
// often than the one-second poll this replaces.
func (g *Gate) RetryAfter() time.Duration { return untilToken(g.limiter.Tokens(), g.limiter.Limit()) }

// Bounds of RetryAfter: no sooner than minRetry, no later than maxRetry (a rate of zero
// allows none).
const (
	minRetry = time.Second
	maxRetry = time.Minute
)

// untilToken is how long a limiter at limit per second holding tokens takes to hold one,
// within [minRetry, maxRetry]. The wait is bounded in seconds before it becomes a
// Duration: a tiny rate's would overflow one.
func untilToken(tokens float64, limit rate.Limit) time.Duration {
	if limit == rate.Inf {
		return minRetry
	}
	if limit <= 0 {
		return maxRetry
	}
	seconds := min(max((1-tokens)/float64(limit), minRetry.Seconds()), maxRetry.Seconds())
	return time.Duration(seconds * float64(time.Second))
}

// Policy is what the gate brings to an eviction decision now: when this hub began to
// watch, and the default toleration of the unreachable taint.
func (g *Gate) Policy() clusters.EvictionPolicy {
	return clusters.EvictionPolicy{Since: g.Since(), UnreachableTolerationSeconds: g.UnreachableTolerationSeconds, Fencing: g.Fencing}
}

// Disrupted says whether evictions under placement wait because more than the gate's
// threshold of the clusters it selects are unreachable or quiet, with the counts.
func (g *Gate) Disrupted(placement *musterv1.Placement, members []musterv1.MemberCluster) (bool, int, int) {
	return clusters.Disrupted(placement, members, g.Threshold, g.Quiet)
}

// Fence returns, for fenced work placed under tolerations whose pods take up to podGrace
// to stop, how long its agent may go without renewing before it stops the work, and the
// policy that moves the work no sooner than the margin (long enough for those pods to
// stop) after that; false when the work tolerates the unreachable taint for ever: it
// never moves, so it needs no fence.
func (g *Gate) Fence(tolerations []corev1.Toleration, podGrace time.Duration) (time.Duration, clusters.EvictionPolicy, bool) {
	p := g.Policy()
	p.Fencing = p.Fencing.ForPods(podGrace)
	toleration, ok := p.UnreachableToleration(tolerations)
	if !ok {
		return 0, p, false
	}
	after, tolerate := p.Fencing.Plan(toleration)
	p.MinUnreachableToleration = tolerate
	return after, p, true
}
