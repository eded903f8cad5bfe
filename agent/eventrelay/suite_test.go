package eventrelay_test

import (
	"context"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/musterhq/muster/agent"
	"github.com/musterhq/muster/agent/eventrelay"
	"github.com/musterhq/muster/internal/testing/envtest"
)

const clusterName = "c1"

// budget is small so that a test can use one Work's up.
var budget = eventrelay.Budget{Burst: 3, Every: time.Hour}

var env *envtest.Environment

// TestMain runs the relay against one real API server that plays both parts: the hub
// (its Works in muster-member-c1) and the member (the objects and events elsewhere).
func TestMain(m *testing.M) { os.Exit(envtest.MainWith(m, &env, startRelay)) }

// startRelay starts the relay as the agent does (agent.Setup): reading the member as the
// agent's ServiceAccount, with its RBAC, through the agent's caches (the member's Warning
// events and its controllers' pods), and the hub's member namespace.
func startRelay(ctx context.Context, env *envtest.Environment) error {
	hub, err := env.HubOf(ctx, clusterName)
	if err != nil {
		return err
	}
	member, err := env.AgentConfig(ctx)
	if err != nil {
		return err
	}
	mgr, err := agent.Setup(member, hub, manager.Options{Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		return err
	}
	r := &eventrelay.Reconciler{
		Member: mgr.GetLocalManager().GetClient(), Hub: hub.GetClient(), Recorder: hub.GetEventRecorder("muster-agent"),
		Cluster: clusterName, Budget: budget,
	}
	if err := r.SetupWithManager(mgr.GetLocalManager()); err != nil {
		return err
	}
	go func() { _ = mgr.Start(ctx) }()
	return nil
}
