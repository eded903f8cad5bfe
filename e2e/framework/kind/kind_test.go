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
			cfg := clusterConfig(tc.spec, Options{}, false)
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
	if got := New(Options{}).Name(); got != ProviderName {
		t.Errorf("Name() = %q, want %q", got, ProviderName)
	}
}

func TestClusterConfigForNodeImagesBuiltHere(t *testing.T) {
	spec := provider.ClusterSpec{Name: "member1", Role: provider.RoleMember}
	cfg := clusterConfig(spec, Options{NodeImage: "muster.local/kind-node:x", BridgeNetwork: true}, true)
	if !cfg.Networking.DisableDefaultCNI {
		t.Error("kindnetd is installed although the image brings its own bridge network (and kindnetd's image is not in it)")
	}
	if cfg.Networking.PodSubnet != PodSubnet {
		t.Errorf("pod subnet %q, want the bridge network's %q", cfg.Networking.PodSubnet, PodSubnet)
	}
	if len(cfg.KubeadmConfigPatches) != 1 || cfg.KubeadmConfigPatches[0] != "kind: KubeletConfiguration\nfailCgroupV1: false\n" {
		t.Errorf("patches %q, want the kubelet allowed on cgroup v1", cfg.KubeadmConfigPatches)
	}
	if cfg := clusterConfig(spec, Options{}, false); cfg.Networking.DisableDefaultCNI || len(cfg.KubeadmConfigPatches) != 0 {
		t.Errorf("kind's own images on cgroup v2 got DisableDefaultCNI=%v patches %q", cfg.Networking.DisableDefaultCNI, cfg.KubeadmConfigPatches)
	}
}

func TestBridgeNetworkRefusesWorkerNodes(t *testing.T) {
	p := New(Options{BridgeNetwork: true})
	err := p.CreateCluster(t.Context(), provider.ClusterSpec{Name: "member1", Nodes: 2}, t.TempDir()+"/kubeconfig")
	if err == nil {
		t.Fatal("a two-worker cluster was created on a network that connects pods within one node only")
	}
}
