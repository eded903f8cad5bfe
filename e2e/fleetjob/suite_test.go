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

// parallelTests is how many tests run at once. The three that cut an agent off, restart
// the hub or kill an agent (TestACutOffAgentIsAlertedAndItsWorkMoves,
// TestARestartedHubGivesEveryClusterAFreshGracePeriod,
// TestAgentKilledMidRunLosesNoCompletionAndAddsNoPod) run first, alone; the others each follow their own FleetJob, chosen by name or label,
// and run together after them. They wait on the fleet far more than they compute.
const parallelTests = 4

func TestMain(m *testing.M) {
	if err := framework.AtLeastParallel(parallelTests); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(framework.RunSuite(m, framework.SuiteConfig{
		Name: "fleetjob", Fleet: framework.FleetOptions{Members: 2}, Prepare: addNodes,
		// Each agent reaches the hub through a link the failover test cuts; the fencing
		// margin is short enough for its jobs, whose pods stop within 5 s.
		LinkAgents: true, HubArgs: []string{"--fencing-margin=20s"},
	}, &fleet, &muster))
}

// addNodes gives each member four nodes of pool "work"; member2 also has the node whose
// pods fail, alone in pool "failing".
func addNodes(ctx context.Context, f *framework.Fleet) error {
	member1, member2 = f.Members[0], f.Members[1]
	for _, m := range f.Members {
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
