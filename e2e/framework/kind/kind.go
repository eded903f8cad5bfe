// Package kind is the e2e cluster provider for machines with a Docker (or Podman) engine:
// every cluster of the fleet is a kind cluster, created through kind's Go API. The hub's
// control plane already signs client certificates and accepts bootstrap tokens, because
// kubeadm configures both.
package kind

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
	"sigs.k8s.io/kind/pkg/cmd"

	"github.com/musterhq/muster/e2e/framework/provider"
)

// ProviderName selects this provider.
const ProviderName = "kind"

// NamePrefix keeps Muster's kind clusters apart from the user's own.
const NamePrefix = "muster-"

// PodSubnet is every cluster's pod network; the node images built here (e2e/nodeimage)
// configure their bridge network for it.
const PodSubnet = "10.244.0.0/16"

// Options say how clusters are created.
type Options struct {
	// NodeImage is the node image of every cluster; empty means kind's default.
	NodeImage string
	// BridgeNetwork says the node image brings its own single-node bridge network (the
	// images built here) instead of kind's kindnetd, which is not in them. Pods on
	// different nodes of one cluster cannot reach each other over it, so clusters then
	// have one node, which runs the workloads too.
	BridgeNetwork bool
}

// Provider creates kind clusters.
type Provider struct {
	kind *cluster.Provider
	opts Options

	// networkMu is held by a creation that may make kind's container network: kind makes
	// it when it is missing, and two creations that both find it missing make two.
	networkMu sync.Mutex
	networked bool
}

var (
	_ provider.ClusterProvider   = (*Provider)(nil)
	_ provider.ConcurrentCreator = (*Provider)(nil)
)

// CreatesConcurrently says a fleet's clusters may be created at once: each is its own set
// of containers, and creations wait for the first one while kind's network is missing.
func (p *Provider) CreatesConcurrently() bool { return true }

// New detects the container engine (docker, podman or nerdctl) the way the kind CLI does.
func New(opts Options) *Provider {
	return &Provider{kind: cluster.NewProvider(cluster.ProviderWithLogger(cmd.NewLogger())), opts: opts}
}

func (p *Provider) Name() string { return ProviderName }

// CreateCluster creates a kind cluster with one control-plane node and spec.Nodes workers.
func (p *Provider) CreateCluster(ctx context.Context, spec provider.ClusterSpec, kubeconfigPath string) (err error) {
	if p.opts.BridgeNetwork && spec.Nodes > 0 {
		return fmt.Errorf("cluster %s: the node image's bridge network connects pods within one node only; ask for 0 worker nodes (the control plane runs workloads)", spec.Name)
	}
	cgroupV1, err := engineHasCgroupV1(ctx)
	if err != nil {
		return err
	}
	cfg := clusterConfig(spec, p.opts, cgroupV1)
	createOpts := []cluster.CreateOption{
		cluster.CreateWithV1Alpha4Config(cfg),
		cluster.CreateWithKubeconfigPath(kubeconfigPath),
		cluster.CreateWithWaitForReady(5 * time.Minute),
		cluster.CreateWithDisplayUsage(false),
		cluster.CreateWithDisplaySalutation(false),
	}
	if p.opts.NodeImage != "" {
		createOpts = append(createOpts, cluster.CreateWithNodeImage(p.opts.NodeImage))
	}
	if !p.awaitNetwork(ctx) {
		// This creation makes the network; the others wait until it has.
		defer p.networkMu.Unlock()
		defer func() { p.networked = err == nil }()
	}
	done := make(chan error, 1)
	go func() { done <- p.kind.Create(NamePrefix+spec.Name, createOpts...) }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("creating kind cluster %s: %w", spec.Name, err)
		}
		return nil
	case <-ctx.Done():
		// kind's API takes no context and cannot be interrupted: wait for it to return
		// (deleting meanwhile would race its creation), then remove what it made.
		<-done
		_ = p.kind.Delete(NamePrefix+spec.Name, kubeconfigPath)
		return ctx.Err()
	}
}

// awaitNetwork returns true once kind's container network exists. Otherwise it returns
// false holding networkMu: the caller's creation makes the network, and unlocks.
func (p *Provider) awaitNetwork(ctx context.Context) bool {
	p.networkMu.Lock()
	if p.networked || networkExists(ctx) {
		p.networked = true
		p.networkMu.Unlock()
		return true
	}
	return false
}

// networkExists asks the container engine for the network kind puts its nodes on.
func networkExists(ctx context.Context) bool {
	name := os.Getenv("KIND_EXPERIMENTAL_DOCKER_NETWORK")
	if name == "" {
		name = "kind"
	}
	return exec.CommandContext(ctx, "docker", "network", "inspect", name).Run() == nil
}

// clusterConfig lays out the kind nodes: a control plane, plus workers for members.
func clusterConfig(spec provider.ClusterSpec, opts Options, cgroupV1 bool) *v1alpha4.Cluster {
	cfg := &v1alpha4.Cluster{
		TypeMeta: v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"},
		Nodes:    []v1alpha4.Node{{Role: v1alpha4.ControlPlaneRole}},
	}
	for range spec.Nodes {
		cfg.Nodes = append(cfg.Nodes, v1alpha4.Node{Role: v1alpha4.WorkerRole})
	}
	cfg.Networking.PodSubnet = PodSubnet
	cfg.Networking.DisableDefaultCNI = opts.BridgeNetwork
	if spec.SigningDuration > 0 {
		cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches, fmt.Sprintf(
			"kind: ClusterConfiguration\ncontrollerManager:\n  extraArgs:\n  - name: cluster-signing-duration\n    value: %s\n", spec.SigningDuration))
	}
	if cgroupV1 {
		// Kubernetes 1.35 and later refuse to run a kubelet on cgroup v1 unless told to.
		cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches, "kind: KubeletConfiguration\nfailCgroupV1: false\n")
	}
	v1alpha4.SetDefaultsCluster(cfg)
	return cfg
}

// engineHasCgroupV1 asks the container engine, which runs the nodes and may be another
// machine's (a Podman machine, Docker Desktop), whether its host mounts cgroup v1.
func engineHasCgroupV1(ctx context.Context) (bool, error) {
	out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.CgroupVersion}}").Output()
	if err != nil {
		return false, fmt.Errorf("asking the container engine for its cgroup version: %w", err)
	}
	return strings.TrimSpace(string(out)) == "1", nil
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

// InternalAPIServer is the cluster's API server URL by its node's address on the kind
// network: reachable from pods of every other cluster without name resolution, and in the
// serving certificate, which kubeadm issues for the advertised address.
func (p *Provider) InternalAPIServer(name string) (string, error) {
	cp, err := p.controlPlane(name)
	if err != nil {
		return "", err
	}
	ipv4, _, err := cp.IP()
	if err != nil {
		return "", fmt.Errorf("address of %s: %w", cp, err)
	}
	return fmt.Sprintf("https://%s:6443", ipv4), nil
}

// LoadImageArchive imports an image archive (`docker save` output) into every node of the
// cluster's containerd, so pods can run it with imagePullPolicy Never.
func (p *Provider) LoadImageArchive(name string, archive func() (io.ReadCloser, error)) error {
	list, err := p.kind.ListInternalNodes(NamePrefix + name)
	if err != nil {
		return fmt.Errorf("listing the nodes of kind cluster %s: %w", name, err)
	}
	for _, n := range list {
		r, err := archive()
		if err != nil {
			return fmt.Errorf("reading the image archive for %s: %w", n, err)
		}
		err = nodeutils.LoadImageArchive(n, r)
		r.Close()
		if err != nil {
			return fmt.Errorf("loading image into %s: %w", n, err)
		}
	}
	return nil
}

func (p *Provider) controlPlane(name string) (nodes.Node, error) {
	list, err := p.kind.ListInternalNodes(NamePrefix + name)
	if err != nil {
		return nil, fmt.Errorf("listing the nodes of kind cluster %s: %w", name, err)
	}
	cps, err := nodeutils.ControlPlaneNodes(list)
	if err != nil {
		return nil, err
	}
	if len(cps) == 0 {
		return nil, fmt.Errorf("kind cluster %s has no control plane node", name)
	}
	return cps[0], nil
}
