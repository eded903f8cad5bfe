// Package kind is the e2e cluster provider for machines with a Docker (or Podman) engine:
// every cluster of the fleet is a kind cluster, created through kind's Go API. The hub's
// control plane already signs client certificates and accepts bootstrap tokens, because
// kubeadm configures both.
package kind

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cmd"

	"github.com/musterhq/muster/e2e/framework/provider"
)

// ProviderName selects this provider.
const ProviderName = "kind"

// NamePrefix keeps Muster's kind clusters apart from the user's own.
const NamePrefix = "muster-"

// Provider creates kind clusters.
type Provider struct {
	kind *cluster.Provider
}

var _ provider.ClusterProvider = (*Provider)(nil)

// New detects the container engine (docker, podman or nerdctl) the way the kind CLI does.
func New() *Provider {
	return &Provider{kind: cluster.NewProvider(cluster.ProviderWithLogger(cmd.NewLogger()))}
}

func (p *Provider) Name() string { return ProviderName }

// CreateCluster creates a kind cluster with one control-plane node and spec.Nodes workers.
func (p *Provider) CreateCluster(ctx context.Context, spec provider.ClusterSpec, kubeconfigPath string) error {
	cfg := clusterConfig(spec)
	done := make(chan error, 1)
	go func() {
		done <- p.kind.Create(NamePrefix+spec.Name,
			cluster.CreateWithV1Alpha4Config(cfg),
			cluster.CreateWithKubeconfigPath(kubeconfigPath),
			cluster.CreateWithWaitForReady(5*time.Minute),
			cluster.CreateWithDisplayUsage(false),
			cluster.CreateWithDisplaySalutation(false),
		)
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("creating kind cluster %s: %w", spec.Name, err)
		}
		return nil
	case <-ctx.Done():
		// kind's API takes no context; remove whatever it created so far.
		_ = p.kind.Delete(NamePrefix+spec.Name, kubeconfigPath)
		return ctx.Err()
	}
}

// clusterConfig lays out the kind nodes: a control plane, plus workers for members.
func clusterConfig(spec provider.ClusterSpec) *v1alpha4.Cluster {
	cfg := &v1alpha4.Cluster{
		TypeMeta: v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"},
		Nodes:    []v1alpha4.Node{{Role: v1alpha4.ControlPlaneRole}},
	}
	for range spec.Nodes {
		cfg.Nodes = append(cfg.Nodes, v1alpha4.Node{Role: v1alpha4.WorkerRole})
	}
	if spec.SigningDuration > 0 {
		cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches, fmt.Sprintf(
			"kind: ClusterConfiguration\ncontrollerManager:\n  extraArgs:\n  - name: cluster-signing-duration\n    value: %s\n", spec.SigningDuration))
	}
	v1alpha4.SetDefaultsCluster(cfg)
	return cfg
}

// DeleteCluster deletes the kind cluster and its kubeconfig entry.
func (p *Provider) DeleteCluster(_ context.Context, name, kubeconfigPath string) error {
	if err := p.kind.Delete(NamePrefix+name, kubeconfigPath); err != nil {
		return fmt.Errorf("deleting kind cluster %s: %w", name, err)
	}
	return nil
}

// InternalKubeconfig is the cluster's kubeconfig as seen from other kind clusters on the
// same container network: members use it to reach the hub.
func (p *Provider) InternalKubeconfig(name string) (string, error) {
	return p.kind.KubeConfig(NamePrefix+name, true)
}
