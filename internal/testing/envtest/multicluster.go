package envtest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	"github.com/musterhq/muster/agent"
)

// HubCluster is the name under which MainMulticluster engages the hub, the agent's name
// for it.
const HubCluster multicluster.ClusterName = agent.HubClusterName

// HubMember is the member whose agent's view of the hub MainMulticluster engages.
const HubMember = "c1"

// MainMulticluster is Main for member-side multicluster reconcilers. setup registers them
// with the agent's own multicluster manager (agent.Setup), so they read through the
// agent's cache filters: the environment is its local cluster, the member, reached as the
// agent's ServiceAccount with the RBAC join installs (see AgentConfig), and it engages the
// environment again as HubCluster. The hub's cache reads
// only what a watch asked for, so a test can tell whether a reconciler watches the hub
// (see WatchesOnHub).
func MainMulticluster(m *testing.M, env **Environment, setup func(mcmanager.Manager) error) int {
	return MainWith(m, env, func(ctx context.Context, e *Environment) error { return e.startAgentManager(ctx, setup) })
}

func (e *Environment) startAgentManager(ctx context.Context, setup func(mcmanager.Manager) error) error {
	hub, err := e.HubOf(ctx, HubMember, func(o *cluster.Options) { o.Cache.ReaderFailOnMissingInformer = true })
	if err != nil {
		return err
	}
	member, err := e.AgentConfig(ctx)
	if err != nil {
		return err
	}
	mgr, err := agent.Setup(member, hub, ctrl.Options{Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		return err
	}
	if err := setup(mgr); err != nil {
		return err
	}
	e.hub = hub
	go func() {
		if err := mgr.Start(ctx); err != nil {
			ctrl.Log.Error(err, "test manager stopped")
		}
	}()
	return nil
}

// WatchesOnHub reports whether a reconciler MainMulticluster started watches the kind of
// list in the hub: the hub's cache answers only for kinds something watches there.
func (e *Environment) WatchesOnHub(ctx context.Context, list client.ObjectList) (bool, error) {
	err := e.hub.GetCache().List(ctx, list)
	var notCached *cache.ErrResourceNotCached
	if errors.As(err, &notCached) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("listing from the hub's cache: %w", err)
	}
	return true, nil
}
