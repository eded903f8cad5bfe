package kind

import (
	"testing"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"

	"github.com/musterhq/muster/e2e/framework/provider"
)

func TestClusterConfigLaysOutNodes(t *testing.T) {
	cases := []struct {
		spec        provider.ClusterSpec
		wantWorkers int
	}{
		{spec: provider.ClusterSpec{Name: "hub", Role: provider.RoleHub}, wantWorkers: 0},
		{spec: provider.ClusterSpec{Name: "member1", Role: provider.RoleMember, Nodes: 3}, wantWorkers: 3},
	}
	for _, tc := range cases {
		t.Run(tc.spec.Name, func(t *testing.T) {
			cfg := clusterConfig(tc.spec)
			controlPlanes, workers := 0, 0
			for _, n := range cfg.Nodes {
				switch n.Role {
				case v1alpha4.ControlPlaneRole:
					controlPlanes++
				case v1alpha4.WorkerRole:
					workers++
				}
			}
			if controlPlanes != 1 || workers != tc.wantWorkers {
				t.Errorf("config has %d control planes and %d workers, want 1 and %d", controlPlanes, workers, tc.wantWorkers)
			}
			if cfg.APIVersion != "kind.x-k8s.io/v1alpha4" || cfg.Kind != "Cluster" {
				t.Errorf("config type = %s/%s, want kind.x-k8s.io/v1alpha4/Cluster", cfg.APIVersion, cfg.Kind)
			}
		})
	}
}

func TestProviderIsSelectable(t *testing.T) {
	if got := New().Name(); got != ProviderName {
		t.Errorf("Name() = %q, want %q", got, ProviderName)
	}
}
