//go:build e2e

// Package broadcastjob runs hub BroadcastJobs across a real fleet: one pod per eligible
// node in every selected member, fleet-wide parallelism, failure policies, deadline, TTL,
// new nodes and clusters, and restarts of the agent and the hub mid-run.
package broadcastjob

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
	fleet  *framework.Fleet
	muster *framework.Muster
	// member1 and member2 join at the start; member3 joins during a test.
	member1, member2, member3 *framework.Cluster
)

// Node pools. Jobs select PoolLabel=batch; each member also has nodes that must get no
// pod: another pool, a NoSchedule taint, a cordon, and the fleet's default unlabelled nodes.
const (
	poolLabel      = "e2e.muster.dev/pool"
	batchPerMember = 10
	failingNode    = "e2e-failing-node"
)

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, framework.SuiteConfig{
		Name:    "broadcastjob",
		Fleet:   framework.FleetOptions{Members: 3, NodesPerMember: 1},
		Prepare: addNodes,
		Join:    func(f *framework.Fleet) []*framework.Cluster { return f.Members[:2] },
	}, &fleet, &muster))
}

// addNodes gives member1 and member2 ten batch nodes each plus one node of every kind that
// must be left alone, member2 the node whose pods fail, and member3 two batch nodes.
func addNodes(ctx context.Context, f *framework.Fleet) error {
	member1, member2, member3 = f.Members[0], f.Members[1], f.Members[2]
	node := func(name, pool string, mutate ...func(*corev1.Node)) *corev1.Node {
		n := local.NewNode(name)
		n.Labels[poolLabel] = pool
		for _, m := range mutate {
			m(n)
		}
		return n
	}
	taint := func(n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}}
	}
	cordon := func(n *corev1.Node) { n.Spec.Unschedulable = true }
	for _, member := range []*framework.Cluster{member1, member2} {
		var nodes []*corev1.Node
		for i := range batchPerMember {
			nodes = append(nodes, node(fmt.Sprintf("%s-batch-%d", member.Name, i), "batch"))
		}
		nodes = append(nodes,
			node(member.Name+"-web", "web"),
			node(member.Name+"-tainted", "batch", taint),
			node(member.Name+"-cordoned", "batch", cordon),
		)
		if member == member2 {
			nodes = append(nodes, node(failingNode, "failing"))
		}
		if err := local.CreateNodes(ctx, member.Clientset, nodes...); err != nil {
			return err
		}
	}
	if err := local.CreateNodes(ctx, member3.Clientset, node("member3-batch-0", "batch"), node("member3-batch-1", "batch")); err != nil {
		return err
	}
	for _, member := range fleet.Members {
		want := 1 + 2
		if member != member3 {
			want = 1 + batchPerMember + 3
			if member == member2 {
				want++
			}
		}
		if err := framework.WaitForClusterReady(ctx, member, want, time.Minute); err != nil {
			return err
		}
	}
	return nil
}
