package framework

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// SuiteConfig shapes an e2e suite that runs Muster in process mode on its own fleet.
type SuiteConfig struct {
	// Name prefixes the suite's temporary directory.
	Name  string
	Fleet FleetOptions
	// Prepare runs once the fleet is up, before Muster is installed: to add nodes, say.
	Prepare func(context.Context, *Fleet) error
	// Join picks the members joined before the tests run; nil joins every member.
	Join func(*Fleet) []*Cluster
	// HubArgs are extra muster-hub flags.
	HubArgs []string
	// LinkAgents joins every member through a Link the tests can cut (Muster.Links).
	LinkAgents bool
}

// RunSuite is the TestMain of such a suite: it brings the fleet up, installs the hub, runs
// muster-hub as a process, joins and accepts the members, stores the fleet and Muster in
// fleet and muster for the tests, runs them, prints the tail of the hub's and agents' logs
// when they failed, and tears everything down. It returns the exit code for os.Exit.
func RunSuite(m *testing.M, cfg SuiteConfig, fleet **Fleet, muster **Muster) int {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "muster-e2e-"+cfg.Name+"-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	opts := cfg.Fleet
	opts.Dir = dir
	// Where a suite's setup goes, printed once it is ready: make test runs a dozen suites.
	start := time.Now()
	var phases []string
	phase := func(name string) {
		phases = append(phases, fmt.Sprintf("%s %s", name, time.Since(start).Round(100*time.Millisecond)))
		start = time.Now()
	}
	f, err := Up(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bringing the fleet up:", err)
		return 1
	}
	*fleet = f
	var mu *Muster
	defer func() {
		if mu != nil {
			mu.Stop()
		}
		if err := f.Down(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "tearing the fleet down:", err)
		}
	}()
	phase("fleet up")
	if cfg.Prepare != nil {
		if err := cfg.Prepare(ctx, f); err != nil {
			fmt.Fprintln(os.Stderr, "preparing the fleet:", err)
			return 1
		}
		phase("prepared")
	}
	if mu, err = InstallHub(ctx, f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*muster = mu
	mu.LinkAgents = cfg.LinkAgents
	phase("hub installed")
	if err := mu.StartHubProcess(append([]string{"--leader-elect=false"}, cfg.HubArgs...)...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	phase("hub serving")
	members := f.Members
	if cfg.Join != nil {
		members = cfg.Join(f)
	}
	if err := mu.JoinAndAccept(ctx, members); err != nil {
		fmt.Fprintln(os.Stderr, err)
		mu.DumpLogs()
		return 1
	}
	phase(fmt.Sprintf("%d members joined", len(members)))
	fmt.Printf("%s suite ready: %s\n", cfg.Name, strings.Join(phases, ", "))
	code := m.Run()
	if code != 0 {
		mu.DumpLogs()
	}
	return code
}

// DumpLogs prints the last few kilobytes of the hub's and every agent's log.
func (m *Muster) DumpLogs() {
	logs := map[string]string{}
	for name, p := range m.Agents {
		logs["agent "+name] = p.Log
	}
	for name, p := range m.Hubs {
		logs[name] = p.Log
	}
	for name, path := range logs {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		if len(raw) > 6000 {
			raw = raw[len(raw)-6000:]
		}
		fmt.Fprintf(os.Stderr, "----- %s log (tail) -----\n%s\n", name, raw)
	}
}

// AtLeastParallel raises -test.parallel to n when it is lower: for suites whose parallel
// tests wait on the clock or on each other's fleets, not on the CPU, so that GOMAXPROCS (2
// on CI) at a time would only serialise their waiting. Call it in TestMain before m.Run.
func AtLeastParallel(n int) error {
	p := flag.Lookup("test.parallel")
	if p == nil {
		return nil
	}
	if cur, err := strconv.Atoi(p.Value.String()); err == nil && cur >= n {
		return nil
	}
	return p.Value.Set(strconv.Itoa(n))
}
