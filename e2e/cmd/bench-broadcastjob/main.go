// Command bench-broadcastjob measures BroadcastJobs at scale on a local fleet: a member
// BroadcastJob over 1000 kwok nodes of one member (the agent's controller alone), then a
// hub BroadcastJob over 3 members × 500 nodes (placement, Work delivery, the agents and
// status back to the hub). For each it prints the seconds from creation to every pod
// created and to Complete. `make bench-broadcastjob` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/e2e/framework/local"
)

const (
	poolLabel = "bench.muster.dev/pool"
	ns        = "default"
)

func main() {
	big := flag.Int("big", 1000, "nodes of the member that runs the single-cluster scenario")
	perMember := flag.Int("per-member", 500, "eligible nodes per member in the fleet scenario")
	flag.Parse()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, *big, *perMember); err != nil {
		fmt.Fprintln(os.Stderr, "bench-broadcastjob:", err)
		os.Exit(1)
	}
}

type result struct {
	scenario         string
	pods             int
	allCreated, done time.Duration
}

func run(ctx context.Context, big, perMember int) error {
	dir, err := os.MkdirTemp("", "muster-bench-bcj-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	f, err := framework.Up(ctx, framework.FleetOptions{Dir: dir, Members: 3, NodesPerMember: 0})
	if err != nil {
		return err
	}
	defer func() {
		if err := f.Down(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "tearing the fleet down:", err)
		}
	}()
	// member1 has `big` nodes, perMember of them in pool "fleet"; the others perMember each.
	for i, m := range f.Members {
		n := perMember
		if i == 0 {
			n = max(big, perMember)
		}
		start := time.Now()
		if err := addNodes(ctx, m, n, perMember); err != nil {
			return err
		}
		if err := framework.WaitForClusterReady(ctx, m, n, 5*time.Minute); err != nil {
			return err
		}
		fmt.Printf("==> %s: %d nodes Ready in %s\n", m.Name, n, time.Since(start).Round(time.Millisecond))
	}
	mu, err := framework.InstallHub(ctx, f)
	if err != nil {
		return err
	}
	defer mu.Stop()
	if err := mu.StartHubProcess("--leader-elect=false"); err != nil {
		return err
	}
	if err := mu.JoinAndAccept(ctx, f.Members); err != nil {
		return err
	}
	fmt.Println("==> hub and 3 members joined")

	var results []result
	member1 := f.Members[0]
	local1 := job("local", nil, map[string]string{poolLabel + "-all": "true"})
	r, err := measure(ctx, "1 member × "+fmt.Sprint(max(big, perMember))+" nodes (agent)", member1, []*framework.Cluster{member1}, local1, max(big, perMember))
	if err != nil {
		return err
	}
	results = append(results, r)

	placement := &musterv1.Placement{}
	fleetJob := job("fleet", placement, map[string]string{poolLabel: "fleet"})
	r, err = measure(ctx, fmt.Sprintf("3 members × %d nodes (hub)", perMember), f.Hub, f.Members, fleetJob, 3*perMember)
	if err != nil {
		return err
	}
	results = append(results, r)

	fmt.Printf("\n%-34s %6s %16s %14s %10s\n", "SCENARIO", "PODS", "ALL CREATED (s)", "COMPLETE (s)", "PODS/S")
	for _, r := range results {
		fmt.Printf("%-34s %6d %16.2f %14.2f %10.1f\n", r.scenario, r.pods, r.allCreated.Seconds(), r.done.Seconds(), float64(r.pods)/r.done.Seconds())
	}
	return nil
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

// measure creates j in owner and polls the members' pods and the job's phase.
func measure(ctx context.Context, scenario string, owner *framework.Cluster, members []*framework.Cluster, j *musterv1.BroadcastJob, want int) (result, error) {
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
