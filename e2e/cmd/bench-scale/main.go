// Command bench-scale measures one hub against a fleet of simulated members (package
// fleetsim: members without API servers that join, renew, report nodes and answer Works
// with the agent's own code), the way OCM's perf tool measures its hub. The hub and its
// API server run as in the local fleet. It runs the scenarios of issue 31 in turn and
// prints one `scale <scenario> …` line for each, with every figure whether or not its
// goal is met:
//
//   - join: every member joins at once (at most -parallel registrations in flight) and is
//     accepted and Available; time, and the peak resident memory of the hub, its
//     kube-apiserver and its etcd.
//
//   - inventory: every member writes its -nodes nodes as NodeSlices; the hub's resident
//     memory once settled, per node, and the API server's storage per node.
//
//   - placement: one Divided FleetJob over every member, then -jobs of them at once: time
//     until every Work is written, and until the jobs complete (the simulated agents
//     complete a Job -job-duration after its Work); beside it the floor, as long as plain
//     creates of as many ConfigMaps of a Work's size take from -parallel goroutines, and
//     the hub's own decision time (muster_placement_decision_seconds, mean and slowest
//     bucket).
//
//   - broadcast: one BroadcastJob over every node of every member: time until every
//     shard is written and until the members' reports add up to Complete, the hub's
//     decision time (it decides again on each report), and the job's size.
//
//   - reconnect: every simulated agent restarts at once (new clients, a renewal, its
//     NodeSlices listed and the changed ones written, its Works listed again); time until
//     all are back and until the hub's work queues drain, the hub's peak memory, and the
//     false Unknowns so far.
//
//   - health: one member stops renewing its Lease; time until the hub marks it not
//     Available, against the grace period, and how many other members were ever marked
//     so during the whole run (false Unknowns).
//
//   - agent: a real member of -agent-nodes kwok nodes joins with a real agent: time until
//     the hub holds every node, the agent's memory, with -agent-pods pods of one job
//     created, and under 1 % node churn a minute, the
//     NodeSlice writes per minute and the time from a label change to the hub's slice.
//
// Throughout, 1 % of every simulated member's nodes change each minute (-churn), and only
// the slices that hold them are written. -scenarios picks some of them. `make bench-scale` runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/musterhq/muster/e2e/fleetsim"
	"github.com/musterhq/muster/e2e/framework"
)

type options struct {
	scenarios                      []string
	agentNodes, agentRounds        int
	agentPods                      int
	members, nodes, parallel, jobs int
	jobDuration, renew             time.Duration
	churn                          float64
	timeout                        time.Duration
	// hubArgs are added to the hub's flags, to measure it with a setting changed.
	hubArgs []string
}

func main() {
	var o options
	flag.IntVar(&o.members, "members", 1000, "simulated member clusters")
	flag.IntVar(&o.nodes, "nodes", 1000, "nodes of each member")
	flag.IntVar(&o.parallel, "parallel", 32, "joins, reports and Work status writes in flight at once")
	flag.IntVar(&o.jobs, "jobs", 10, "Divided FleetJobs placed at once in the second placement round")
	flag.DurationVar(&o.jobDuration, "job-duration", 20*time.Second, "how long a placed Job runs in a simulated member")
	flag.DurationVar(&o.renew, "renew", 10*time.Second, "Lease renewal interval of the simulated agents (the agent's default)")
	flag.Float64Var(&o.churn, "churn", 0.01, "share of every member's nodes that change each minute")
	flag.DurationVar(&o.timeout, "timeout", 15*time.Minute, "the longest any one scenario may take")
	scenarios := flag.String("scenarios", strings.Join(scenarioNames, ","), "the scenarios to run, in their order; those after join need it")
	flag.IntVar(&o.agentNodes, "agent-nodes", 5000, "kwok nodes of the real member the agent scenario joins")
	flag.IntVar(&o.agentPods, "agent-pods", 10000, "pods of one job the agent scenario runs on the real member while its nodes churn")
	flag.IntVar(&o.agentRounds, "agent-rounds", 2, "minutes of 1 % node churn in the agent scenario")
	flag.Func("hub-arg", "a flag for the hub, as --kube-api-qps=1000 (repeat for more)", func(v string) error {
		o.hubArgs = append(o.hubArgs, v)
		return nil
	})
	flag.Parse()
	o.scenarios = strings.Split(*scenarios, ",")
	// The simulated agents' clients log through controller-runtime; their failures show
	// in the figures (false Unknowns, status write failures), not as a thousand log lines.
	crlog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-scale:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	began := time.Now()
	dir, err := os.MkdirTemp("", "muster-bench-scale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	f, err := framework.Up(ctx, framework.FleetOptions{Dir: dir})
	if err != nil {
		return fmt.Errorf("bringing the hub up: %w", err)
	}
	defer func() { _ = f.Down(context.WithoutCancel(ctx)) }()
	m, err := framework.InstallHub(ctx, f)
	if err != nil {
		return err
	}
	if err := m.StartHubProcess(append([]string{"--leader-elect=false", "--auto-accept-clusters"}, o.hubArgs...)...); err != nil {
		return err
	}
	defer m.Stop()
	boot, err := fleetsim.Discover(ctx, m.JoinArgs)
	if err != nil {
		return err
	}
	watch, err := watchFleet(ctx, f.Hub)
	if err != nil {
		return err
	}
	fleet, err := fleetsim.New(fleetsim.Config{
		Prefix: "sim", Members: o.members, NodesPerMember: o.nodes, Parallel: o.parallel,
		RenewInterval: o.renew, JobDuration: o.jobDuration, QPS: 50,
	})
	if err != nil {
		return err
	}
	b := &bench{
		o: o, up: f, muster: m, hub: f.Hub, hubMetrics: m.MetricsURLs["hub"], boot: boot, watch: watch,
		samples: newSampler(ctx, m.HubProc, dir), fleet: fleet,
	}
	fmt.Printf("scale setup members=%d nodes-per-member=%d hub-up=%s hub-args=%q\n", o.members, o.nodes, time.Since(began).Round(time.Second), o.hubArgs)
	var failed []error
	for _, name := range o.scenarios {
		scenario := b.scenario(name)
		if scenario == nil {
			return fmt.Errorf("no scenario %q: the scenarios are %s", name, strings.Join(scenarioNames, ", "))
		}
		err := scenario(ctx)
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return errors.Join(append(failed, fmt.Errorf("scenario %s: %w", name, err))...)
		case errors.Is(err, errMissed):
			fmt.Printf("scale %s missed=%q%s\n", name, err.Error(), b.samples.figures())
		default:
			// Every scenario prints its line: one that failed says why, and the run goes on,
			// but for the fleet the others stand on.
			fmt.Printf("scale %s failed=%q%s\n", name, err.Error(), b.samples.figures())
			failed = append(failed, fmt.Errorf("scenario %s: %w", name, err))
			if name == "join" || name == "inventory" {
				return errors.Join(failed...)
			}
		}
	}
	return errors.Join(failed...)
}

// scenarioNames are the scenarios in the order they run by default.
var scenarioNames = []string{"join", "inventory", "placement", "broadcast", "reconnect", "health", "agent"}

func (b *bench) scenario(name string) func(context.Context) error {
	return map[string]func(context.Context) error{
		"join": b.join, "inventory": b.inventory, "placement": b.placement, "broadcast": b.broadcast,
		"reconnect": b.reconnect, "health": b.health, "agent": b.agent,
	}[name]
}
