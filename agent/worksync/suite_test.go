package worksync_test

import (
	"context"
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/musterhq/muster/agent"
	"github.com/musterhq/muster/agent/worksync"
	"github.com/musterhq/muster/internal/testing/envtest"
)

const clusterName = "c1"

var env *envtest.Environment

// TestMain runs the work syncer in the agent's manager (agent.Setup) against one real API
// server that plays both parts: the hub (engaged as "hub", restricted to muster-member-c1)
// and the member (the local cluster).
// In the member the syncer is the agent's ServiceAccount with the RBAC join installs, and
// applies Works as the default executor: RBAC there is real.
func TestMain(m *testing.M) { os.Exit(envtest.MainWith(m, &env, startAgent)) }

func startAgent(ctx context.Context, env *envtest.Environment) error {
	hub, err := env.HubOf(ctx, clusterName)
	if err != nil {
		return err
	}
	member, err := env.AgentConfig(ctx)
	if err != nil {
		return err
	}
	executor, err := worksync.NewExecutor(member, worksync.DefaultExecutor)
	if err != nil {
		return err
	}
	mgr, err := agent.Setup(member, hub, manager.Options{Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		return err
	}
	r := &worksync.Reconciler{Manager: mgr, HubCluster: agent.HubClusterName, Cluster: clusterName, Workers: 2, Executor: executor}
	if err := r.SetupWithManager(mgr); err != nil {
		return err
	}
	go func() { _ = mgr.Start(ctx) }()
	return nil
}
