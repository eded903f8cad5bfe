package framework

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"golang.org/x/sync/errgroup"

	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub"
)

// Muster is Muster installed on a fleet in process mode: `musterctl init --no-deploy` on
// the hub, `musterctl join --no-deploy` in members, and the hub and agents run by the test.
type Muster struct {
	Fleet *Fleet
	Bin   Binaries
	// JoinArgs are the musterctl arguments init printed, without --cluster-name.
	JoinArgs []string
	Agents   map[string]*Process
	// HubProc is the suite's hub; Hubs holds every hub process started, by name.
	HubProc *Process
	Hubs    map[string]*Process
	// MetricsURLs are the Prometheus endpoints of the processes started, by process name
	// ("hub", "agent-member1"), each on a free local port.
	MetricsURLs map[string]string
	// LinkAgents joins each member through a Link of its own, for tests that partition an
	// agent from the hub; Links holds them by member name.
	LinkAgents bool
	Links      map[string]*Link
	// HelmReleases are the Helm releases installed in each cluster, by cluster name.
	HelmReleases map[string]string
	// hubArgs are the suite hub's extra flags, for RestartHub.
	hubArgs []string
}

var joinLine = regexp.MustCompile(`musterctl (join .*) --cluster-name <name>`)

// InstallHub builds the binaries and runs `musterctl init --no-deploy` against the hub.
func InstallHub(ctx context.Context, f *Fleet) (*Muster, error) {
	bin, err := BuildBinaries(ctx, filepath.Join(f.Dir, "bin"))
	if err != nil {
		return nil, err
	}
	m := &Muster{Fleet: f, Bin: bin, Agents: map[string]*Process{}, Hubs: map[string]*Process{}, MetricsURLs: map[string]string{}, Links: map[string]*Link{}}
	out, err := m.Musterctl(ctx, f.Hub, "init", "--no-deploy")
	if err != nil {
		return nil, err
	}
	match := joinLine.FindStringSubmatch(out)
	if match == nil {
		return nil, fmt.Errorf("musterctl init printed no join command:\n%s", out)
	}
	m.JoinArgs = strings.Fields(match[1])
	return m, nil
}

// Musterctl runs musterctl against a cluster and returns its combined output; a non-zero
// exit is an error that carries the output.
func (m *Muster) Musterctl(ctx context.Context, c *Cluster, args ...string) (string, error) {
	out, err := runCommand(ctx, m.Bin.Musterctl, append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
	if err != nil {
		return out, fmt.Errorf("musterctl %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}

// runCommand runs bin with args and returns its combined output; a non-zero exit is an
// error that carries the output.
func runCommand(ctx context.Context, bin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%w\n%s", err, out.String())
	}
	return out.String(), nil
}

// Join runs the join command init printed in member, in process mode, with extra
// arguments overriding it.
func (m *Muster) Join(ctx context.Context, member *Cluster, name string, extra ...string) (string, error) {
	args := append(append(append([]string{}, m.JoinArgs...), "--cluster-name", name, "--no-deploy"), extra...)
	return m.Musterctl(ctx, member, args...)
}

// StartAgent runs muster-agent for a member that joined.
func (m *Muster) StartAgent(member *Cluster, extra ...string) error {
	metrics, err := m.metricsArgs("agent-" + member.Name)
	if err != nil {
		return err
	}
	args := append(append([]string{
		"--kubeconfig", member.Kubeconfig, "--health-probe-bind-address", "0",
		"--leader-elect=false",
	}, metrics...), extra...)
	p, err := StartProcess("agent-"+member.Name, filepath.Join(m.Fleet.Dir, "logs", "agent-"+member.Name+".log"), m.Bin.Agent, args...)
	if err != nil {
		return err
	}
	m.Agents[member.Name] = p
	return nil
}

// StartHubProcess runs the muster-hub binary against the hub as the suite's hub.
func (m *Muster) StartHubProcess(extra ...string) error {
	p, err := m.StartHub("hub", extra...)
	if err != nil {
		return err
	}
	m.HubProc, m.hubArgs = p, extra
	return nil
}

// RestartHub stops the suite's hub and starts it again with the same flags, once down has
// returned (what happens while the hub is down), logging as name; MetricsURLs["hub"]
// follows it.
func (m *Muster) RestartHub(name string, down func()) error {
	m.HubProc.Stop()
	down()
	return m.startHubAgain(name)
}

// CrashHub kills the suite's hub at once (SIGKILL: no lease released, no write finished)
// and, once down has returned (what the test looks at while the hub is down), starts it
// again with the same flags, logging as name, as a supervisor restarts a crashed process.
func (m *Muster) CrashHub(name string, down func()) error {
	m.HubProc.Kill()
	down()
	return m.startHubAgain(name)
}

func (m *Muster) startHubAgain(name string) error {
	p, err := m.StartHub(name, m.hubArgs...)
	if err != nil {
		return err
	}
	m.HubProc = p
	m.MetricsURLs["hub"] = m.MetricsURLs[name]
	return nil
}

// StartHub runs a muster-hub process called name (logging to logs/<name>.log) with the
// process-mode flags and extra, which override them: a second replica, say.
func (m *Muster) StartHub(name string, extra ...string) (*Process, error) {
	args, err := HubProcessArgs(m.Fleet.Hub)
	if err != nil {
		return nil, err
	}
	metrics, err := m.metricsArgs(name)
	if err != nil {
		return nil, err
	}
	// The later flag wins: the metrics port replaces HubProcessArgs' "0".
	p, err := StartProcess(name, filepath.Join(m.Fleet.Dir, "logs", name+".log"), m.Bin.Hub, append(append(args, metrics...), extra...)...)
	if err != nil {
		return nil, err
	}
	m.Hubs[name] = p
	return p, nil
}

// HubProcessArgs are muster-hub's flags for running as a process next to the hub
// cluster: its kubeconfig, no metrics (StartHub adds a port) or probe ports, and the
// admission webhook on a free local port that the API server calls at localhost (the
// webhook's certificate names DNS names only).
func HubProcessArgs(hub *Cluster) ([]string, error) {
	port, err := FreePort()
	if err != nil {
		return nil, fmt.Errorf("finding a free port for the hub's webhook: %w", err)
	}
	return []string{
		"--kubeconfig", hub.Kubeconfig, "--metrics-bind-address", "0", "--health-probe-bind-address", "0",
		"--webhook-host", "localhost", "--webhook-port", strconv.Itoa(port),
	}, nil
}

// metricsArgs picks a free local port for the named process's metrics endpoint, records
// its URL in MetricsURLs, and returns the flag that serves it.
func (m *Muster) metricsArgs(name string) ([]string, error) {
	port, err := FreePort()
	if err != nil {
		return nil, fmt.Errorf("finding a free port for the metrics of %s: %w", name, err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	m.MetricsURLs[name] = "http://" + addr + "/metrics"
	return []string{"--metrics-bind-address", addr}, nil
}

// FreePort returns a local TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

// link makes member's Link to the hub and returns the join arguments that name it as the
// hub's address.
func (m *Muster) link(member *Cluster) ([]string, error) {
	hubURL := ""
	for i, a := range m.JoinArgs {
		if v, ok := strings.CutPrefix(a, "--hub-apiserver="); ok {
			hubURL = v
		} else if a == "--hub-apiserver" && i+1 < len(m.JoinArgs) {
			hubURL = m.JoinArgs[i+1]
		}
	}
	u, err := url.Parse(hubURL)
	if err != nil {
		return nil, fmt.Errorf("the hub address to link %s through: %w", member.Name, err)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("the join line names no hub address to link %s through (%q)", member.Name, hubURL)
	}
	l, err := NewLink(u.Host)
	if err != nil {
		return nil, err
	}
	m.Links[member.Name] = l
	return []string{"--hub-apiserver", "https://" + l.Addr()}, nil
}

// Stop stops the hub and agent processes.
func (m *Muster) Stop() {
	for _, l := range m.Links {
		l.Close()
	}
	for _, p := range m.Agents {
		p.Stop()
	}
	for _, p := range m.Hubs {
		p.Stop()
	}
}

// StartHubInProcess runs the hub's controllers inside the test process, so a test can
// look into them (the inventory); it stops when ctx ends.
func StartHubInProcess(ctx context.Context, f *Fleet, opts *hub.Options) (*hub.Controllers, error) {
	mgr, err := ctrl.NewManager(f.Hub.Config, ctrl.Options{
		Scheme:                 scheme.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         false,
	})
	if err != nil {
		return nil, err
	}
	controllers, err := hub.Setup(ctx, mgr, opts)
	if err != nil {
		return nil, err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			ctrl.Log.Error(err, "in-process hub stopped")
		}
	}()
	return controllers, nil
}

// WaitForClusterCondition waits until the MemberCluster has the condition with status.
// SetClusterTaints replaces the taints of MemberCluster name with what change makes of
// them, as an administrator's patch.
func SetClusterTaints(ctx context.Context, hubCluster *Cluster, name string, change func([]corev1.Taint) []corev1.Taint) error {
	var mc musterv1.MemberCluster
	if err := hubCluster.Client.Get(ctx, client.ObjectKey{Name: name}, &mc); err != nil {
		return fmt.Errorf("reading MemberCluster %s: %w", name, err)
	}
	patch := client.MergeFrom(mc.DeepCopy())
	mc.Spec.Taints = change(mc.Spec.Taints)
	if err := hubCluster.Client.Patch(ctx, &mc, patch); err != nil {
		return fmt.Errorf("setting the taints of MemberCluster %s: %w", name, err)
	}
	return nil
}

func WaitForClusterCondition(ctx context.Context, hubCluster *Cluster, name, condition string, status metav1.ConditionStatus, timeout time.Duration) (*musterv1.MemberCluster, error) {
	var mc musterv1.MemberCluster
	err := until(ctx, timeout, fmt.Sprintf("cluster %s to be %s=%s", name, condition, status), func(ctx context.Context) (bool, string, error) {
		if err := hubCluster.Client.Get(ctx, types.NamespacedName{Name: name}, &mc); err != nil {
			return false, err.Error(), client404(err)
		}
		c := meta.FindStatusCondition(mc.Status.Conditions, condition)
		if c == nil {
			return false, "no condition", nil
		}
		return c.Status == status, fmt.Sprintf("%s=%s (%s)", condition, c.Status, c.Reason), nil
	})
	return &mc, err
}

// Until polls cond until it holds or timeout passes; the error names what and the last
// reason cond gave.
func Until(ctx context.Context, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string, error)) error {
	return until(ctx, timeout, what, cond)
}

// joinWait bounds each wait of JoinAndAccept, as InstallInCluster's.
const joinWait = 3 * time.Minute

// JoinAndAccept joins members with the real musterctl, starts their agents, accepts them,
// and waits until each is Joined and Available and the hub holds its whole node inventory.
func (m *Muster) JoinAndAccept(ctx context.Context, members []*Cluster, agentArgs ...string) error {
	// musterctl join writes only to its own member (and reads the hub): the members join at once.
	var joins errgroup.Group
	for _, member := range members {
		var through []string
		if m.LinkAgents {
			arg, err := m.link(member)
			if err != nil {
				return err
			}
			through = arg
		}
		joins.Go(func() error {
			_, err := m.Join(ctx, member, member.Name, through...)
			return err
		})
	}
	if err := joins.Wait(); err != nil {
		return err
	}
	for _, member := range members {
		if err := m.StartAgent(member, agentArgs...); err != nil {
			return err
		}
	}
	for _, member := range members {
		if _, err := m.Musterctl(ctx, m.Fleet.Hub, "accept", member.Name); err != nil {
			return err
		}
	}
	// A join takes seconds on an idle machine; a hub busy with a thousand simulated members
	// (make bench-scale) or a CI machine running a kind fleet can take minutes.
	for _, member := range members {
		for _, cond := range []string{musterv1.MemberClusterJoined, musterv1.MemberClusterAvailable} {
			if _, err := WaitForClusterCondition(ctx, m.Fleet.Hub, member.Name, cond, metav1.ConditionTrue, joinWait); err != nil {
				return err
			}
		}
		if err := WaitForNodeInventory(ctx, m.Fleet.Hub, member, joinWait); err != nil {
			return err
		}
	}
	return nil
}

// WaitForNodeInventory waits until the member's NodeSlices on the hub list every node the
// member has. Available only says the agent renews its Lease; its NodeSlices arrive moments
// later, and a test that places work at once would otherwise see an incomplete fleet.
func WaitForNodeInventory(ctx context.Context, hubCluster, member *Cluster, timeout time.Duration) error {
	return until(ctx, timeout, member.Name+"'s nodes in the hub inventory", func(ctx context.Context) (bool, string, error) {
		var nodes corev1.NodeList
		if err := member.Client.List(ctx, &nodes); err != nil {
			return false, err.Error(), nil
		}
		var slices musterv1.NodeSliceList
		if err := hubCluster.Client.List(ctx, &slices, client.InNamespace(musterv1.MemberNamespace(member.Name))); err != nil {
			return false, err.Error(), nil
		}
		inventory := 0
		for _, s := range slices.Items {
			inventory += len(s.Nodes)
		}
		return inventory == len(nodes.Items), fmt.Sprintf("%d of %d nodes", inventory, len(nodes.Items)), nil
	})
}
