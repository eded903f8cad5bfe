// Command bench-broadcastjob measures BroadcastJobs at scale on a local fleet.
//
// First, side by side on one member with 1000 kwok nodes: the agent's BroadcastJob
// controller and OpenKruise's (kruise-manager, built from the module proxy by the toolchain
// package, run outside the cluster with its webhooks left empty) binding pods through the
// scheduler and by nodeName, in turns (rotating which goes first, after one warm-up
// run that is not counted), -runs times each, all at the client QPS and burst
// the agent runs with. Each run's job selects the same 1000 nodes, and kwok finishes each
// pod a second after it runs. For every run it prints the seconds from creation to every
// pod created, every pod bound and the job Complete, the write requests the member's API
// server served and the controller's CPU time; then each side's medians and `ratio` lines.
//
// Then, unless -fleet=false, a hub BroadcastJob over 3 members × 500 nodes, Muster only
// (placement, Work delivery, the agents and status back to the hub), once.
// `make bench-broadcastjob` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/e2e/framework/local"
	"github.com/musterhq/muster/internal/testing/toolchain"
)

const (
	poolLabel = "bench.muster.dev/pool"
	ns        = "default"
)

type options struct {
	big, perMember, runs, qps, burst int
	fleet                            bool
}

func main() {
	var o options
	flag.IntVar(&o.big, "big", 1000, "nodes of the member that runs the side-by-side scenario")
	flag.IntVar(&o.perMember, "per-member", 500, "eligible nodes per member in the fleet scenario")
	flag.IntVar(&o.runs, "runs", 3, "side-by-side runs per controller, alternating")
	// The agent's defaults (agent.NewOptions), given to both sides explicitly.
	flag.IntVar(&o.qps, "qps", 200, "client QPS of the agent and of kruise-manager")
	flag.IntVar(&o.burst, "burst", 400, "client burst of the agent and of kruise-manager")
	flag.BoolVar(&o.fleet, "fleet", true, "after the side-by-side runs, add two members and run a hub BroadcastJob over 3 × per-member nodes")
	flag.Parse()
	o.runs = max(o.runs, 1)
	o.big = max(o.big, o.perMember)
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-broadcastjob:", err)
		os.Exit(1)
	}
}

// run keeps the fleet's directory, with every process's log, when it fails.
func run(ctx context.Context, o options) (err error) {
	cacheDir, err := toolchain.CacheDir()
	if err != nil {
		return err
	}
	kruise, err := toolchain.EnsureKruise(ctx, cacheDir, os.Stderr)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "muster-bench-bcj-")
	if err != nil {
		return err
	}
	f, err := framework.Up(ctx, framework.FleetOptions{Dir: dir, Members: 1, NodesPerMember: 0})
	if err != nil {
		return err
	}
	defer func() {
		if downErr := f.Down(context.Background()); downErr != nil {
			fmt.Fprintln(os.Stderr, "tearing the fleet down:", downErr)
		}
		if err == nil {
			os.RemoveAll(dir)
		} else {
			fmt.Fprintf(os.Stderr, "logs kept in %s\n", dir)
		}
	}()
	member1 := f.Members[0]
	if err := readyNodes(ctx, member1, o.big, o.perMember); err != nil {
		return err
	}
	mu, err := framework.InstallHub(ctx, f)
	if err != nil {
		return err
	}
	defer mu.Stop()
	if err := mu.StartHubProcess("--leader-elect=false"); err != nil {
		return err
	}
	agentArgs := []string{"--kube-api-qps", strconv.Itoa(o.qps), "--kube-api-burst", strconv.Itoa(o.burst)}
	if err := mu.JoinAndAccept(ctx, f.Members, agentArgs...); err != nil {
		return err
	}
	if err := installKruise(ctx, member1, kruise.CRDs); err != nil {
		return err
	}
	fmt.Printf("==> hub and member1 (%d nodes) up, Kruise %s installed; logs in %s\n", o.big, toolchain.KruiseVersion, dir)
	if err := sideBySide(ctx, o, dir, mu, member1, kruise.Manager); err != nil {
		return err
	}
	if !o.fleet {
		return nil
	}
	return fleetScenario(ctx, o, f, mu, agentArgs)
}

// readyNodes adds n nodes to m, perMember of them in pool "fleet", and waits until they
// are Ready.
func readyNodes(ctx context.Context, m *framework.Cluster, n, perMember int) error {
	start := time.Now()
	if err := addNodes(ctx, m, n, perMember); err != nil {
		return err
	}
	if err := framework.WaitForClusterReady(ctx, m, n, 5*time.Minute); err != nil {
		return err
	}
	fmt.Printf("==> %s: %d nodes Ready in %s\n", m.Name, n, time.Since(start).Round(time.Millisecond))
	return nil
}

// sideBySide runs the three sides in turns on member1 and reports them.
func sideBySide(ctx context.Context, o options, dir string, mu *framework.Muster, member1 *framework.Cluster, kruiseBin string) error {
	selector := map[string]string{poolLabel + "-all": "true"}
	manager := &kruiseManager{bin: kruiseBin, dir: dir, member: member1, qps: o.qps, burst: o.burst}
	sides := []side{
		musterSide{agent: mu.Agents[member1.Name], selector: selector},
		kruiseSide{manager: manager, byScheduler: true, selector: selector},
		kruiseSide{manager: manager, byScheduler: false, selector: selector},
	}
	fmt.Printf("==> side by side: %d runs each, alternating, client QPS %d burst %d\n", o.runs, o.qps, o.burst)
	// The first job on a fresh member is slower whoever runs it (kwok and the API server
	// warm up): one run before the measured ones is not counted. The order of the sides
	// then rotates from round to round, so none always runs first or after the same one.
	if _, err := measureRun(ctx, member1, sides[0], 0, o.big); err != nil {
		return fmt.Errorf("warm-up run of %s: %w", sides[0].name(), err)
	}
	results := make([][]runResult, len(sides))
	for i := 1; i <= o.runs; i++ {
		for k := range sides {
			j := (i - 1 + k) % len(sides)
			s := sides[j]
			r, err := measureRun(ctx, member1, s, i, o.big)
			if err != nil {
				return fmt.Errorf("run %d of %s: %w", i, s.name(), err)
			}
			results[j] = append(results[j], r)
			fmt.Printf("==> run %d %-16s created %.2fs, bound %.2fs, all succeeded %.2fs, Complete %.2fs; writes %.0f (jobs %.0f, pods %.0f, events %.0f); CPU %.2fs\n",
				i, r.side, r.created.Seconds(), r.bound.Seconds(), r.succeeded.Seconds(), r.complete.Seconds(), r.writes.total(), r.writes.jobs, r.writes.pods, r.writes.events, r.cpu.Seconds())
		}
	}
	report(os.Stdout, fmt.Sprintf("broadcastjob-%d", o.big), results)
	return nil
}

// fleetScenario adds member2 and member3 with perMember nodes each, joins them and runs a
// hub BroadcastJob over the fleet pool of all three members.
func fleetScenario(ctx context.Context, o options, f *framework.Fleet, mu *framework.Muster, agentArgs []string) error {
	for range 2 {
		m, err := f.AddMember(ctx, 0)
		if err != nil {
			return err
		}
		if err := readyNodes(ctx, m, o.perMember, o.perMember); err != nil {
			return err
		}
	}
	if err := mu.JoinAndAccept(ctx, f.Members[1:], agentArgs...); err != nil {
		return err
	}
	fmt.Println("==> member2 and member3 joined")
	fleetJob := job("fleet", &musterv1.Placement{}, map[string]string{poolLabel: "fleet"})
	r, err := measureFleet(ctx, fmt.Sprintf("3 members × %d nodes (hub)", o.perMember), f.Hub, f.Members, fleetJob, 3*o.perMember)
	if err != nil {
		return err
	}
	fmt.Printf("\n%-34s %6s %16s %14s %10s\n", "SCENARIO", "PODS", "ALL CREATED (s)", "COMPLETE (s)", "PODS/S")
	fmt.Printf("%-34s %6d %16.2f %14.2f %10.1f\n", r.scenario, r.pods, r.allCreated.Seconds(), r.done.Seconds(), float64(r.pods)/r.done.Seconds())
	return nil
}

type result struct {
	scenario         string
	pods             int
	allCreated, done time.Duration
}

func addNodes(ctx context.Context, m *framework.Cluster, n, inFleetPool int) error {
	nodes := make([]*corev1.Node, 0, n)
	for i := range n {
		node := local.NewNode(fmt.Sprintf("%s-n%04d", m.Name, i))
		node.Labels[poolLabel+"-all"] = "true"
		if i < inFleetPool {
			node.Labels[poolLabel] = "fleet"
		}
		nodes = append(nodes, node)
	}
	return local.CreateNodes(ctx, m.Clientset, nodes...)
}

func job(name string, placement *musterv1.Placement, selector map[string]string) *musterv1.BroadcastJob {
	return &musterv1.BroadcastJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: musterv1.BroadcastJobSpec{
			Placement: placement,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				NodeSelector:  selector,
				Containers:    []corev1.Container{{Name: "probe", Image: "busybox"}},
			}},
		},
	}
}

// measureFleet creates j in owner and polls the members' pods and the job's phase.
func measureFleet(ctx context.Context, scenario string, owner *framework.Cluster, members []*framework.Cluster, j *musterv1.BroadcastJob, want int) (result, error) {
	r := result{scenario: scenario, pods: want}
	start := time.Now()
	if err := owner.Client.Create(ctx, j); err != nil {
		return r, err
	}
	err := framework.Until(ctx, 10*time.Minute, scenario+" to complete", func(ctx context.Context) (bool, string, error) {
		if r.allCreated == 0 {
			total := 0
			for _, m := range members {
				var pods corev1.PodList
				if err := m.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{musterv1.BroadcastJobNameLabel: j.Name}); err != nil {
					return false, err.Error(), nil
				}
				total += len(pods.Items)
			}
			if total >= want {
				r.allCreated = time.Since(start)
			}
		}
		var cur musterv1.BroadcastJob
		if err := owner.Client.Get(ctx, client.ObjectKeyFromObject(j), &cur); err != nil {
			return false, err.Error(), nil
		}
		if cur.Status.Phase == musterv1.BroadcastJobFailedPh {
			return false, "", fmt.Errorf("%s failed: %+v", scenario, cur.Status.Conditions)
		}
		if cur.Status.Phase == musterv1.BroadcastJobCompleted {
			r.done = time.Since(start)
			if int(cur.Status.Succeeded) != want {
				return false, "", fmt.Errorf("%s completed with %d succeeded, want %d", scenario, cur.Status.Succeeded, want)
			}
			return true, "", nil
		}
		return false, fmt.Sprintf("%+v", cur.Status.BroadcastCounts), nil
	})
	if r.allCreated == 0 {
		r.allCreated = r.done
	}
	fmt.Printf("==> %s: all pods created %.2fs, Complete %.2fs\n", scenario, r.allCreated.Seconds(), r.done.Seconds())
	return r, err
}
