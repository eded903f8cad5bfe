package toolchain

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Versions of what a kind node image holds beyond the test toolchain. CoreDNS is the release
// kubeadm v1.36 deploys; etcd is the test toolchain's, which is also kubeadm's.
const (
	CNIPluginsVersion = "v1.9.1"
	CRIToolsVersion   = "v1.36.0"
	CoreDNSVersion    = "v1.14.2"
)

// Binary names of the node components.
const (
	Kubelet   = "kubelet"
	Kubeadm   = "kubeadm"
	KubeProxy = "kube-proxy"
	Crictl    = "crictl"
	CoreDNS   = "coredns"
)

// CNIPlugins are the plugins a single-node cluster's bridge network needs.
var CNIPlugins = []string{"bridge", "host-local", "loopback", "portmap"}

var nodeComponents = []component{
	{
		name:     "kubernetes-node",
		version:  KubernetesVersion,
		binaries: []string{Kubelet, Kubeadm, KubeProxy},
		build:    kubernetesCommands(Kubelet, Kubeadm, KubeProxy),
	},
	{
		name:     "cni-plugins",
		version:  CNIPluginsVersion,
		binaries: CNIPlugins,
		build: func(ctx context.Context, g *goTool, src, outDir string) error {
			var pkgs []string
			for _, p := range CNIPlugins {
				kind := "main"
				switch p {
				case "host-local":
					kind = "ipam"
				case "portmap":
					kind = "meta"
				}
				pkgs = append(pkgs, fmt.Sprintf("github.com/containernetworking/plugins/plugins/%s/%s", kind, p))
			}
			return goInstall(ctx, g, src, outDir, CNIPluginsVersion, pkgs...)
		},
	},
	{
		name:     "crictl",
		version:  CRIToolsVersion,
		binaries: []string{Crictl},
		build: func(ctx context.Context, g *goTool, src, outDir string) error {
			// Not `go install`: the module proxy refuses cri-tools' version list, which go
			// install reads to check for deprecation.
			return buildPinned(ctx, g, src, outDir, "sigs.k8s.io/cri-tools", CRIToolsVersion, "sigs.k8s.io/cri-tools/cmd/crictl")
		},
	},
	{
		name:     "coredns",
		version:  CoreDNSVersion,
		binaries: []string{CoreDNS},
		build: func(ctx context.Context, g *goTool, src, outDir string) error {
			return goInstall(ctx, g, src, outDir, CoreDNSVersion, "github.com/coredns/coredns")
		},
	},
}

// NodeBinaries are the built binaries a kind node image is assembled from, by name.
type NodeBinaries struct {
	paths map[string]string
}

// Path returns where the named binary (Kubelet, Etcd, "bridge", ...) is cached.
func (n *NodeBinaries) Path(binary string) string { return n.paths[binary] }

// EnsureNode builds (once) and returns the binaries of a kind node image: the test
// toolchain's control plane and etcd, plus kubelet, kubeadm, kube-proxy, the CNI plugins,
// crictl and CoreDNS.
func EnsureNode(ctx context.Context, cacheDir string, log io.Writer) (*NodeBinaries, error) {
	if _, err := Ensure(ctx, cacheDir, log); err != nil {
		return nil, err
	}
	if err := ensureComponents(ctx, cacheDir, nodeComponents, log); err != nil {
		return nil, err
	}
	n := &NodeBinaries{paths: map[string]string{}}
	for _, set := range [][]component{components, nodeComponents} {
		for _, c := range set {
			for _, b := range c.binaries {
				n.paths[b] = filepath.Join(cacheDir, c.entryName(), b)
			}
		}
	}
	return n, nil
}

// buildPinned builds pkgs of module at version in a helper module that requires it.
func buildPinned(ctx context.Context, g *goTool, src, outDir, module, version string, pkgs ...string) error {
	goMod := fmt.Sprintf("module muster.local/toolchain/pinned\n\ngo 1.25\n\nrequire %s %s\n", module, version)
	if err := writeHelperModule(src, goMod); err != nil {
		return err
	}
	_, err := g.run(ctx, src, nil, append([]string{"build", "-ldflags", "-s -w", "-o", outDir + string(os.PathSeparator)}, pkgs...)...)
	return err
}
