package failover

import (
	"context"
	"testing"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/placement/clusters"
)

func TestUntilToken(t *testing.T) {
	cases := []struct {
		name   string
		tokens float64
		limit  rate.Limit
		want   time.Duration
	}{
		{name: "empty at one a second", tokens: 0, limit: 1, want: time.Second},
		{name: "half a token at one every four seconds", tokens: 0.5, limit: 0.25, want: 2 * time.Second},
		{name: "empty at one every ten seconds", tokens: 0, limit: 0.1, want: 10 * time.Second},
		{name: "spent below zero by a reservation", tokens: -1, limit: 1, want: 2 * time.Second},
		{name: "a fast rate: no sooner than the floor", tokens: 0, limit: 10, want: minRetry},
		{name: "a token already: no sooner than the floor", tokens: 1, limit: 1, want: minRetry},
		{name: "a slow rate is capped", tokens: 0, limit: 0.001, want: maxRetry},
		{name: "a tiny rate does not overflow", tokens: 0, limit: 1e-12, want: maxRetry},
		{name: "rate zero allows none: look again at the cap", tokens: 0, limit: 0, want: maxRetry},
		{name: "no limit", tokens: 0, limit: rate.Inf, want: minRetry},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := untilToken(tc.tokens, tc.limit); got != tc.want {
				t.Errorf("untilToken(%v, %v) = %v, want %v", tc.tokens, tc.limit, got, tc.want)
			}
		})
	}
}

// TestRetryAfterFollowsTheRate: a gate whose one token was just spent says to look again
// when the rate gives the next, not after a fixed poll.
func TestRetryAfterFollowsTheRate(t *testing.T) {
	g := New(clock.RealClock{}, 0.2, 0.55, 300)
	if !g.Ready() || !g.Take() {
		t.Fatal("a new gate refused its first eviction")
	}
	if g.Ready() || g.Take() {
		t.Fatal("a gate at 0.2 per second allowed a second eviction at once")
	}
	// Up to 5 s (less the time since the Take), and more than the old one-second poll
	// however slow this machine is.
	if got := g.RetryAfter(); got <= 2*time.Second || got > 5*time.Second {
		t.Errorf("RetryAfter %v after the token was spent at 0.2 per second, want about 5s", got)
	}
}

// TestSinceIsTheLeadersStart: before the leader's runnable runs, the gate measures from
// now; afterwards from when it ran, however much later it is asked.
func TestSinceIsTheLeadersStart(t *testing.T) {
	start := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	c := clocktesting.NewFakeClock(start)
	g := New(c, 1, 0.55, 300)
	c.Step(time.Minute)
	if got := g.Since(); !got.Equal(start.Add(time.Minute)) {
		t.Errorf("Since before the gate started = %v, want now (%v)", got, start.Add(time.Minute))
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- g.Runnable()(ctx) }()
	for deadline := time.Now().Add(10 * time.Second); g.sinceSet().IsZero(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the gate's runnable did not record the start in 10s")
		}
	}
	c.Step(time.Hour)
	if got := g.Since(); !got.Equal(start.Add(time.Minute)) {
		t.Errorf("Since an hour after the start = %v, want the start (%v)", got, start.Add(time.Minute))
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("the gate's runnable ended with %v", err)
	}
}

// TestFenceCoversThePodsGrace: the agent stops fenced work early enough that its pods,
// given their whole termination grace, are gone before the hub moves the work (Grace after
// the last renewal to the taint, the toleration after that); work that tolerates the
// unreachable taint for ever needs no fence.
func TestFenceCoversThePodsGrace(t *testing.T) {
	g := New(clock.RealClock{}, 1, 0.55, 300)
	g.Fencing.Grace, g.Fencing.Margin = 40*time.Second, 60*time.Second
	tolerate := func(seconds *int64) []corev1.Toleration {
		return []corev1.Toleration{{Key: musterv1.UnreachableTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds}}
	}
	if _, _, fenced := g.Fence(tolerate(nil), 0); fenced {
		t.Error("work that tolerates the unreachable taint for ever was fenced")
	}
	for _, tc := range []struct {
		toleration     int64
		grace, atLeast time.Duration // the pods' grace; the least room left between them gone and the move
	}{
		{toleration: 300, grace: 0, atLeast: 60 * time.Second},
		{toleration: 300, grace: 30 * time.Second, atLeast: 30 * time.Second},
		{toleration: 300, grace: 120 * time.Second, atLeast: 30 * time.Second},
		{toleration: 0, grace: 120 * time.Second, atLeast: 30 * time.Second},
	} {
		after, p, ok := g.Fence(tolerate(ptr.To(tc.toleration)), tc.grace)
		if !ok {
			t.Fatalf("work tolerating %ds was not fenced", tc.toleration)
		}
		gone, moved := after+tc.grace, g.Fencing.Grace+p.MinUnreachableToleration
		if moved-gone < tc.atLeast {
			t.Errorf("toleration %ds, pods' grace %v: the agent stops them after %v of silence, gone by %v, and the hub moves them at %v; want %v between",
				tc.toleration, tc.grace, after, gone, moved, tc.atLeast)
		}
		if after < clusters.MinFenceAfter {
			t.Errorf("toleration %ds, pods' grace %v: the agent stops them after %v of silence, want at least %v", tc.toleration, tc.grace, after, clusters.MinFenceAfter)
		}
	}
}
