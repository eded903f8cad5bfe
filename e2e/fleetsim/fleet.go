// Package fleetsim simulates member clusters without member API servers, to measure the
// hub at the scale of a thousand members, as OCM's perf tool does for its hub. Each
// simulated member runs the agent's own code where the hub would notice a difference: it
// joins through the real path (registration.Registrar: bootstrap token, MemberCluster,
// CSR, acceptance), renews its Lease with heartbeat.Renewer, lays its nodes into
// NodeSlices with inventory.BuildSlices, and answers its Works with what an agent feeds
// back. One process simulates the whole fleet; joins and status writes run in bounded
// pools.
package fleetsim

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/musterhq/muster/agent/registration"
)

// Config shapes a simulated fleet.
type Config struct {
	// Prefix names the members Prefix-0001, Prefix-0002, ….
	Prefix string
	// Members is how many members; NodesPerMember, how many nodes each has.
	Members, NodesPerMember int
	// Parallel bounds the joins and reports in flight at once, and the Work status writes.
	Parallel int
	// RenewInterval is how often each member renews its Lease (the agent's default: 10 s).
	RenewInterval time.Duration
	// JobDuration is how long a Job the hub places runs before it completes.
	JobDuration time.Duration
	// QPS is each member's client rate limit toward the hub.
	QPS float32
}

// Fleet is a simulated fleet of members.
type Fleet struct {
	cfg      Config
	Members  []*Member
	writes   chan struct{}
	failures atomic.Int64
}

// New is a fleet of cfg.Members members, none joined yet. Members, NodesPerMember and
// Parallel must be positive.
func New(cfg Config) (*Fleet, error) {
	if cfg.Members < 1 || cfg.NodesPerMember < 1 || cfg.Parallel < 1 {
		return nil, fmt.Errorf("a simulated fleet needs at least one member, one node each and one write at a time: got %d, %d and %d", cfg.Members, cfg.NodesPerMember, cfg.Parallel)
	}
	f := &Fleet{cfg: cfg, writes: make(chan struct{}, cfg.Parallel)}
	for i := range cfg.Members {
		f.Members = append(f.Members, &Member{Name: fmt.Sprintf("%s-%04d", cfg.Prefix, i+1), cfg: &f.cfg, failures: &f.failures})
	}
	return f, nil
}

// StatusFailures is how many Work status writes the hub refused so far.
func (f *Fleet) StatusFailures() int64 { return f.failures.Load() }

// Join joins every member with the bootstrap credentials in boot (its ClusterName is
// ignored), at most Parallel at once, and starts its Lease renewals as soon as it holds
// a certificate, as an agent does. ctx bounds the joins; renewals run until run ends.
func (f *Fleet) Join(ctx, run context.Context, boot registration.Bootstrap) error {
	return f.each(ctx, func(ctx context.Context, m *Member) error {
		// An agent whose registration fails exits and is restarted: the hub's webhook,
		// say, may not serve yet.
		for attempt := 1; ; attempt++ {
			err := m.Join(ctx, boot)
			if err == nil {
				break
			}
			if attempt == joinAttempts {
				return err
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Second):
			}
		}
		m.StartRenewing(run)
		return nil
	})
}

// joinAttempts is how many times a member tries to join before the fleet gives up.
const joinAttempts = 30

// Report writes every member's NodeSlices and status, at most Parallel at once.
func (f *Fleet) Report(ctx context.Context) error {
	return f.each(ctx, func(ctx context.Context, m *Member) error { return m.Report(ctx) })
}

// AnswerWorks answers every member's Works until run ends.
func (f *Fleet) AnswerWorks(run context.Context) {
	for _, m := range f.Members {
		m.StartAnswering(run, f.writes)
	}
}

// Restart restarts every member's agent at once (at most parallel restarting together;
// 0: all of them), with the bootstrap credentials boot the members joined with; ctx bounds
// the restarts, and the agents run again until run ends. It returns how many NodeSlices
// the members wrote as they started.
func (f *Fleet) Restart(ctx, run context.Context, boot registration.Bootstrap, parallel int) (int, error) {
	g, ctx := errgroup.WithContext(ctx)
	if parallel > 0 {
		g.SetLimit(parallel)
	}
	var wrote atomic.Int64
	for _, m := range f.Members {
		g.Go(func() error {
			n, err := m.Restart(ctx, run, boot, f.writes)
			wrote.Add(int64(n))
			return err
		})
	}
	err := g.Wait()
	return int(wrote.Load()), err
}

// Churn changes share of every member's nodes each period until ctx ends; each round's
// count of slices written goes to written, when set.
func (f *Fleet) Churn(ctx context.Context, share float64, period time.Duration, written func(round, slices int, took time.Duration)) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for round := 1; ; round++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		start := time.Now()
		var mu sync.Mutex
		total := 0
		err := f.each(ctx, func(ctx context.Context, m *Member) error {
			n, err := m.Churn(ctx, share, round)
			mu.Lock()
			total += n
			mu.Unlock()
			return err
		})
		if err == nil && written != nil {
			written(round, total, time.Since(start))
		}
	}
}

// each runs fn for every member, at most Parallel at once, and returns the first error.
func (f *Fleet) each(ctx context.Context, fn func(context.Context, *Member) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(f.cfg.Parallel)
	for _, m := range f.Members {
		g.Go(func() error { return fn(ctx, m) })
	}
	return g.Wait()
}
