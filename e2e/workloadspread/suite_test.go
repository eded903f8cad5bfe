//go:build e2e

// Package workloadspread runs WorkloadSpreads against a real fleet (hub and two members):
// the hub's admission webhook refuses each rule OpenAPI and CEL cannot express with a
// clear message, and a spread places its FleetJob's pods over ordered subsets, caps them,
// resizes them with the job, patches their pods, and moves pods that cannot be scheduled.
package workloadspread

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

// unschedulableWindow is the hub's --spread-unschedulable-window here: half a minute
// rather than the default five, so the Adaptive test sees a subset tried again soon. What
// the test checks inside the window (the move, and that it holds) takes about 10 s.
const unschedulableWindow = 30 * time.Second

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, framework.SuiteConfig{
		Name: "workloadspread", Fleet: framework.FleetOptions{Members: 2}, Prepare: addNodes,
		HubArgs: []string{"--spread-unschedulable-window=" + unschedulableWindow.String()},
	}, &fleet, &muster))
}

// addNodes gives each member four nodes of 8 CPUs.
func addNodes(ctx context.Context, f *framework.Fleet) error {
	member1, member2 = f.Members[0], f.Members[1]
	for _, m := range f.Members {
		var nodes []*corev1.Node
		for i := range 4 {
			nodes = append(nodes, local.NewNode(fmt.Sprintf("%s-node-%d", m.Name, i)))
		}
		if err := local.CreateNodes(ctx, m.Clientset, nodes...); err != nil {
			return err
		}
		if err := framework.WaitForClusterReady(ctx, m, len(nodes), time.Minute); err != nil {
			return err
		}
	}
	return nil
}
