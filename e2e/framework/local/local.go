// Package local is the default e2e cluster provider: every cluster is a set of real
// control-plane processes (etcd, kube-apiserver, kube-controller-manager, kube-scheduler)
// started by kwokctl's binary runtime from the cached toolchain, with kwok faking the nodes
// and moving pods through their lifecycle according to stages.yaml.
package local

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/musterhq/muster/e2e/framework/provider"
	"github.com/musterhq/muster/internal/testing/toolchain"
)

// ProviderName selects this provider.
const ProviderName = "local"

//go:embed stages.yaml
var stages []byte

// Provider runs clusters as local processes through kwokctl.
type Provider struct {
	tc *toolchain.Toolchain
	// dir holds kwokctl's working directory, the stage config and logs.
	dir   string
	ports *portPool
}

var _ provider.ClusterProvider = (*Provider)(nil)

// New returns a provider that keeps its clusters under dir.
func New(tc *toolchain.Toolchain, dir string) *Provider {
	return &Provider{tc: tc, dir: dir, ports: newPortPool()}
}

func (p *Provider) Name() string { return ProviderName }

func (p *Provider) workDir() string { return filepath.Join(p.dir, "kwok") }

func (p *Provider) clusterDir(name string) string {
	return filepath.Join(p.workDir(), "clusters", name)
}

// CreateCluster starts the cluster's processes, waits until its API server answers and
// then adds the requested fake nodes, named <cluster>-node-<i>.
func (p *Provider) CreateCluster(ctx context.Context, spec provider.ClusterSpec, kubeconfigPath string) error {
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return err
	}
	ports, err := p.ports.take(len(portFlags) + 1)
	if err != nil {
		return fmt.Errorf("ports for cluster %s: %w", spec.Name, err)
	}
	// The stages, and etcd's peer port, which kwokctl takes only from a configuration file.
	configPath := filepath.Join(p.dir, spec.Name+"-config.yaml")
	config := fmt.Appendf(bytes.Clone(stages), "---\napiVersion: config.kwok.x-k8s.io/v1alpha1\nkind: KwokctlConfiguration\noptions:\n  etcdPeerPort: %d\n", ports[len(portFlags)])
	if err := os.WriteFile(configPath, config, 0o644); err != nil {
		return err
	}
	args := append([]string{"create", "cluster", "--name", spec.Name, "--config", configPath, "--kubeconfig", kubeconfigPath},
		p.createArgs(spec)...)
	for i, flag := range portFlags {
		args = append(args, flag, strconv.Itoa(ports[i]))
	}
	if err := p.kwokctl(ctx, args...); err != nil {
		// Leave nothing half-started behind.
		_ = p.DeleteCluster(context.WithoutCancel(ctx), spec.Name, kubeconfigPath)
		return fmt.Errorf("creating cluster %s: %w", spec.Name, err)
	}
	if err := createDefaultNodes(ctx, kubeconfigPath, spec.Name, spec.Nodes); err != nil {
		return fmt.Errorf("adding nodes to cluster %s: %w", spec.Name, err)
	}
	return nil
}

// nodeSliceWatchCache is the hub API server's --watch-cache-sizes value that turns its
// watch cache off for NodeSlices, as the README's "Scale" recommends for large fleets.
const nodeSliceWatchCache = "nodeslices.muster.dev#0"

// portFlags are kwokctl's flags for the ports of a cluster's processes, each given one the
// provider picked (see portPool).
var portFlags = []string{
	"--kube-apiserver-port", "--etcd-port", "--kube-controller-manager-port", "--kube-scheduler-port", "--controller-port",
}

// CreatesConcurrently reports that clusters of one provider may be created at once: they
// get distinct ports and directories.
func (p *Provider) CreatesConcurrently() bool { return true }

// createArgs are kwokctl's flags for one cluster: every binary from the toolchain (so
// kwokctl downloads nothing), no client QPS limits, RBAC on, and for the hub the
// certificate signer and bootstrap tokens that joining members need.
func (p *Provider) createArgs(spec provider.ClusterSpec) []string {
	args := []string{
		"--runtime", "binary",
		"--kube-apiserver-binary", p.tc.Path(toolchain.KubeAPIServer),
		"--kube-controller-manager-binary", p.tc.Path(toolchain.KubeControllerManager),
		"--kube-scheduler-binary", p.tc.Path(toolchain.KubeScheduler),
		"--etcd-binary", p.tc.Path(toolchain.Etcd),
		"--kwok-controller-binary", p.tc.Path(toolchain.Kwok),
		"--kube-authorization=true",
		"--disable-qps-limits",
		"--wait", "2m",
	}
	if spec.Role == provider.RoleHub {
		pki := filepath.Join(p.clusterDir(spec.Name), "pki")
		args = append(args,
			"--extra-args", "kube-apiserver=enable-bootstrap-token-auth=true",
			"--extra-args", "kube-controller-manager=controllers=*,bootstrapsigner,tokencleaner",
			"--extra-args", "kube-controller-manager=cluster-signing-cert-file="+filepath.Join(pki, "ca.crt"),
			"--extra-args", "kube-controller-manager=cluster-signing-key-file="+filepath.Join(pki, "ca.key"),
			// Only the hub's loader watches NodeSlices (an agent lists its own now and
			// then): the API server's watch cache would hold a second, decoded copy of
			// every node, 3.6 GiB against 0.8 GiB without it at 300 members × 1,000 nodes
			// (see the README's "Scale"). kwokctl files an extra arg under the position of
			// its component's first one in the list, so this one must come after the
			// controller manager's first.
			"--extra-args", "kube-apiserver=watch-cache-sizes="+nodeSliceWatchCache,
			// --disable-qps-limits turns API Priority and Fairness off with the in-flight
			// limits; the hub's API server gets them back, at their defaults, as every real
			// one runs: what the hub's chart sets up there (its agents' heartbeat priority
			// level) is then in force here, and a scale run's load is queued as a real
			// hub's would be. These come after kwokctl's own flags, and the last one wins.
			"--extra-args", "kube-apiserver=enable-priority-and-fairness=true",
			"--extra-args", "kube-apiserver=max-requests-inflight=400",
			"--extra-args", "kube-apiserver=max-mutating-requests-inflight=200",
		)
		if spec.SigningDuration > 0 {
			args = append(args, "--extra-args", "kube-controller-manager=cluster-signing-duration="+spec.SigningDuration.String())
		}
	}
	return args
}

// DeleteCluster stops the cluster's processes and removes its state. It makes sure no
// process of the cluster survives: kwokctl's own stop is checked, and stragglers killed.
func (p *Provider) DeleteCluster(ctx context.Context, name, kubeconfigPath string) error {
	if _, err := os.Stat(p.clusterDir(name)); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	pids := p.clusterPIDs(name)
	deleteErr := p.kwokctl(ctx, "delete", "cluster", "--name", name, "--kubeconfig", kubeconfigPath)
	if err := reapProcesses(ctx, pids); err != nil {
		return errors.Join(deleteErr, err)
	}
	if deleteErr != nil {
		return deleteErr
	}
	return os.RemoveAll(p.clusterDir(name))
}

// clusterPIDs reads the pid files kwokctl keeps for a cluster's processes.
func (p *Provider) clusterPIDs(name string) []int {
	files, _ := filepath.Glob(filepath.Join(p.clusterDir(name), "pids", "*.pid"))
	var pids []int
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// reapProcesses waits up to 10s for pids to exit, then kills the survivors.
func reapProcesses(ctx context.Context, pids []int) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		alive := alivePIDs(pids)
		if len(alive) == 0 {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			for _, pid := range alive {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return fmt.Errorf("processes %v outlived their cluster and were killed", alive)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// alivePIDs returns the pids that still exist and are not zombies.
func alivePIDs(pids []int) []int {
	var alive []int
	for _, pid := range pids {
		if processAlive(pid) {
			alive = append(alive, pid)
		}
	}
	return alive
}

func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	// A zombie has exited; it only waits for its parent to collect it.
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) == 0 || fields[0] != "Z"
}

// ClusterPIDs exposes the processes of a running cluster, for tests that check teardown.
func (p *Provider) ClusterPIDs(name string) []int { return p.clusterPIDs(name) }

// ProcessesAlive reports which of pids still run.
func ProcessesAlive(pids []int) []int { return alivePIDs(pids) }

// kwokctl runs kwokctl with args, appending its output to logs/kwokctl.log; a failure
// carries the output's tail.
func (p *Provider) kwokctl(ctx context.Context, args ...string) error {
	logDir := filepath.Join(p.dir, "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, p.tc.Path(toolchain.Kwokctl), args...)
	cmd.Env = append(os.Environ(), "KWOK_WORKDIR="+p.workDir())
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	logName := filepath.Join(logDir, "kwokctl.log")
	if f, ferr := os.OpenFile(logName, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); ferr == nil {
		fmt.Fprintf(f, "$ kwokctl %s\n%s\n", strings.Join(args, " "), out.Bytes())
		f.Close()
	}
	if err != nil {
		return fmt.Errorf("kwokctl %s: %w\n%s", args[0]+" "+args[1], err, tail(out.String(), 2000))
	}
	return nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// StopCluster stops every process of a cluster, keeping its state: the cluster is down
// as if its machines lost power.
func (p *Provider) StopCluster(ctx context.Context, name string) error {
	pids := p.clusterPIDs(name)
	if err := p.kwokctl(ctx, "stop", "cluster", "--name", name); err != nil {
		return err
	}
	return reapProcesses(ctx, pids)
}

// StartCluster starts a stopped cluster again and waits until it serves.
func (p *Provider) StartCluster(ctx context.Context, name string) error {
	return p.kwokctl(ctx, "start", "cluster", "--name", name, "--wait", "2m")
}
