package fleetsim

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/agent/heartbeat"
	"github.com/musterhq/muster/agent/inventory"
	"github.com/musterhq/muster/agent/registration"
	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// memberVersion is the Kubernetes version simulated members report.
const memberVersion = "v1.36.3-fleetsim"

// Member is one simulated member cluster: its agent's identity on the hub, what it keeps
// in its own cluster (the agent's Secrets), its nodes' churn, and its Lease renewals.
type Member struct {
	Name string
	cfg  *Config

	// member stands in for the member's API server: kube-system, whose UID is the cluster
	// ID, and the agent's Secrets, kept across join attempts as a real cluster keeps them.
	member kubernetes.Interface

	hub       client.WithWatch
	hubset    kubernetes.Interface
	hubConfig *rest.Config

	mu sync.Mutex
	// revisions is each node's ChurnLabel value; nodes are built again from it.
	revisions []int32
	// versions are the resourceVersions of the member's NodeSlices as last written.
	versions map[string]string
	// changed counts the nodes churn has changed, to pick the next ones round-robin.
	changed int
	// stopRenewing ends the Lease renewals.
	stopRenewing context.CancelFunc
	// stopAnswering ends the Work answers; answering is closed once they ended.
	stopAnswering context.CancelFunc
	answering     chan struct{}

	// failures counts the Work status writes the hub refused, fleet-wide.
	failures *atomic.Int64
	// answers remembers, by Work name, the generation answered and the timer that will
	// report its Job complete (StartAnswering).
	answers map[string]answer
}

// Join registers the member with the hub as its agent does, with the agent's own
// registration code: the MemberCluster created with the bootstrap token, a certificate
// requested and waited for until the hub accepts the cluster. The member's own API server
// is stood in for by an in-memory clientset that holds only what registration keeps there
// (kube-system, whose UID is the cluster ID, and the agent's Secrets). A join tried again
// goes on from what the one before kept there, as an agent restarted does.
func (m *Member) Join(ctx context.Context, boot registration.Bootstrap) error {
	if m.member == nil {
		m.member = fake.NewClientset(
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: metav1.NamespaceSystem, UID: uuid.NewUUID()}},
			&corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: musterv1.AgentNamespace, Name: registration.BootstrapSecret},
				Data: map[string][]byte{
					registration.KeyHubURL: []byte(boot.HubURL), registration.KeyCA: boot.CA,
					registration.KeyToken: []byte(boot.Token), registration.KeyClusterName: []byte(m.Name),
				},
			},
		)
	}
	reg := &registration.Registrar{
		Store:  &registration.Store{Client: m.member, Namespace: musterv1.AgentNamespace},
		Member: m.member, CertLifetime: 24 * time.Hour, Now: time.Now,
	}
	creds, err := reg.EnsureCredentials(ctx)
	if err != nil {
		return fmt.Errorf("joining %s: %w", m.Name, err)
	}
	cert, err := creds.Certificate()
	if err != nil {
		return fmt.Errorf("%s's certificate: %w", m.Name, err)
	}
	cfg, err := registration.HubConfig(creds.HubURL, creds.CA, registration.NewCertHolder(cert))
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = m.cfg.QPS, int(2*m.cfg.QPS)
	hub, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	hubset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	// Churn may be writing slices with the clients of the agent before a restart.
	m.mu.Lock()
	m.hub, m.hubset, m.hubConfig = hub, hubset, cfg
	m.mu.Unlock()
	return nil
}

// HubConfig is a copy of the configuration of the agent's hub clients, its identity; nil
// before the member joined.
func (m *Member) HubConfig() *rest.Config {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hubConfig == nil {
		return nil
	}
	return rest.CopyConfig(m.hubConfig)
}

// hubClient is the agent's current client of the hub, which a restart replaces.
func (m *Member) hubClient() client.WithWatch {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hub
}

// StartRenewing renews the member's Lease every RenewInterval with the agent's Renewer,
// until ctx ends or StopRenewing is called.
func (m *Member) StartRenewing(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	m.mu.Lock()
	m.stopRenewing = cancel
	hubset := m.hubset
	m.mu.Unlock()
	renewer := &heartbeat.Renewer{Hub: hubset, Cluster: m.Name, Holder: m.Name + "-fleetsim", Interval: m.cfg.RenewInterval}
	go func() { _ = renewer.Start(ctx) }()
}

// StopRenewing stops the Lease renewals, as an agent that died would.
func (m *Member) StopRenewing() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopRenewing != nil {
		m.stopRenewing()
	}
}

// Report writes the member's nodes to the hub as the agent's inventory does: NodeSlices
// of at most 500 nodes (inventory.BuildSlices), and the MemberCluster's status with node
// counts, allocatable totals and Joined.
func (m *Member) Report(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.revisions = make([]int32, m.cfg.NodesPerMember)
	m.versions = map[string]string{}
	nodes := m.nodes()
	want := inventory.BuildSlices(m.Name, nodes)
	for i := range want {
		if err := m.hub.Create(ctx, &want[i]); err != nil {
			return fmt.Errorf("creating NodeSlice %s: %w", want[i].Name, err)
		}
		m.versions[want[i].Name] = want[i].ResourceVersion
	}
	counts, allocatable := inventory.Summarize(nodes)
	// The hub writes the cluster's Available condition into the same status: a write of
	// the whole status that raced with it would undo it.
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var mc musterv1.MemberCluster
		if err := m.hub.Get(ctx, types.NamespacedName{Name: m.Name}, &mc); err != nil {
			return fmt.Errorf("reading MemberCluster %s: %w", m.Name, err)
		}
		before := mc.DeepCopy()
		mc.Status.Version = memberVersion
		mc.Status.Nodes = &counts
		mc.Status.Allocatable = allocatable
		meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
			Type: musterv1.MemberClusterJoined, Status: metav1.ConditionTrue, Reason: musterv1.MemberClusterReasonAgentConnected,
			Message: "the agent holds a hub certificate and reports", ObservedGeneration: mc.Generation,
		})
		mc.Status.LastInventoryReportTime = &metav1.Time{Time: time.Now()}
		return m.hub.Status().Patch(ctx, &mc, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	})
}

// nodes builds the member's nodes with their current ChurnLabel values.
func (m *Member) nodes() []corev1.Node {
	nodes := Nodes(m.Name, len(m.revisions))
	for i := range nodes {
		nodes[i].Labels[ChurnLabel] = revision(int(m.revisions[i]))
	}
	return nodes
}

// Churn changes ChurnLabel on the next share of the member's nodes (round-robin) to
// round, and rewrites only the NodeSlices that hold a changed node, as the agent's
// inventory rewrites only the slices that differ. It returns how many it wrote.
func (m *Member) Churn(ctx context.Context, share float64, round int) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	total := len(m.revisions)
	if total == 0 {
		return 0, nil
	}
	dirty := map[string]bool{}
	for range max(1, int(share*float64(total))) {
		i := m.changed % total
		m.changed++
		m.revisions[i] = int32(round)
		// Nodes are named in index order, and slices hold them in name order.
		dirty[inventory.SliceName(m.Name, i/musterv1.MaxNodesPerSlice)] = true
	}
	for _, slice := range inventory.BuildSlices(m.Name, m.nodes()) {
		if !dirty[slice.Name] {
			continue
		}
		slice.ResourceVersion = m.versions[slice.Name]
		if err := m.hub.Update(ctx, &slice); err != nil {
			return 0, fmt.Errorf("updating NodeSlice %s: %w", slice.Name, err)
		}
		m.versions[slice.Name] = slice.ResourceVersion
	}
	return len(dirty), nil
}

// Restart stops the member's agent and starts it again, as an agent rolled out anew or a
// member rebooted would: Lease renewals and Work answers stop, the agent's hub clients are
// made again from the credentials it keeps in its cluster, it renews at once, lists its
// NodeSlices and writes those that differ from its nodes (as the agent's inventory does
// at start), and lists its Works again. It returns how many slices it wrote.
func (m *Member) Restart(ctx, run context.Context, boot registration.Bootstrap, writes chan struct{}) (int, error) {
	m.StopRenewing()
	m.StopAnswering()
	if err := m.Join(ctx, boot); err != nil {
		return 0, err
	}
	m.StartRenewing(run)
	// The agent's reporter retries a failed round with backoff (its controller requeues
	// it); so does the simulated one, until ctx ends: a thousand agents listing their
	// slices at once may see some lists run past the API server's timeout.
	wrote, err := 0, error(nil)
	for delay := time.Second; ; delay = min(2*delay, 30*time.Second) {
		if wrote, err = m.writeChangedSlices(ctx); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return wrote, err
		case <-time.After(delay):
		}
	}
	m.StartAnswering(run, writes)
	return wrote, nil
}

// writeChangedSlices lists the member's NodeSlices on the hub and writes those that
// differ from its nodes.
func (m *Member) writeChangedSlices(ctx context.Context) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var have musterv1.NodeSliceList
	if err := m.hub.List(ctx, &have, client.InNamespace(musterv1.MemberNamespace(m.Name))); err != nil {
		return 0, fmt.Errorf("listing %s's NodeSlices: %w", m.Name, err)
	}
	stored := map[string]*musterv1.NodeSlice{}
	for i := range have.Items {
		stored[have.Items[i].Name] = &have.Items[i]
	}
	wrote := 0
	for _, want := range inventory.BuildSlices(m.Name, m.nodes()) {
		got := stored[want.Name]
		switch {
		case got == nil:
			if err := m.hub.Create(ctx, &want); err != nil {
				return wrote, fmt.Errorf("creating NodeSlice %s: %w", want.Name, err)
			}
			m.versions[want.Name] = want.ResourceVersion
			wrote++
		case inventory.Differs(got, &want):
			got = inventory.Rewritten(got, &want)
			if err := m.hub.Update(ctx, got); err != nil {
				return wrote, fmt.Errorf("updating NodeSlice %s: %w", want.Name, err)
			}
			m.versions[want.Name] = got.ResourceVersion
			wrote++
		default:
			m.versions[want.Name] = got.ResourceVersion
		}
	}
	return wrote, nil
}
