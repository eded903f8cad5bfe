//go:build e2e

// Package fleetjob runs FleetJobs across a real fleet: shards placed through Works and run
// by the agents' Job controller (kube-controller-manager ignores them), divided Indexed
// jobs with fleet-wide indexes, duplicates, a pod failure policy that fails the fleet,
// and an agent killed mid-run.
package fleetjob

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/e2e/framework/local"
)

var (
	fleet            *framework.Fleet
	muster           *framework.Muster
	member1, member2 *framework.Cluster
)

const (
	poolLabel   = "e2e.muster.dev/pool"
	failingNode = "e2e-failing-node"
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "muster-e2e-fleetjob-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	fleet, err = framework.Up(ctx, framework.FleetOptions{Dir: dir, Members: 2, NodesPerMember: 0})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bringing the fleet up:", err)
		return 1
	}
	member1, member2 = fleet.Members[0], fleet.Members[1]
	defer func() {
		if muster != nil {
			muster.Stop()
		}
		if err := fleet.Down(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "tearing the fleet down:", err)
		}
	}()
	if err := addNodes(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if muster, err = framework.InstallHub(ctx, fleet); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := muster.StartHubProcess("--leader-elect=false"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := muster.JoinAndAccept(ctx, fleet.Members); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if code != 0 {
		for name, p := range muster.Agents {
			if raw, err := os.ReadFile(p.Log); err == nil {
				if len(raw) > 4000 {
					raw = raw[len(raw)-4000:]
				}
				fmt.Fprintf(os.Stderr, "----- agent %s log (tail) -----\n%s\n", name, raw)
			}
		}
	}
	return code
}

// addNodes gives each member four nodes of pool "work"; member2 also has the node whose
// pods fail, alone in pool "failing".
func addNodes(ctx context.Context) error {
	for _, m := range fleet.Members {
		var nodes []*corev1.Node
		for i := range 4 {
			n := local.NewNode(fmt.Sprintf("%s-work-%d", m.Name, i))
			n.Labels[poolLabel] = "work"
			nodes = append(nodes, n)
		}
		want := 4
		if m == member2 {
			n := local.NewNode(failingNode)
			n.Labels[poolLabel] = "failing"
			nodes = append(nodes, n)
			want++
		}
		if err := local.CreateNodes(ctx, m.Clientset, nodes...); err != nil {
			return err
		}
		if err := framework.WaitForClusterReady(ctx, m, want, time.Minute); err != nil {
			return err
		}
	}
	return nil
}
