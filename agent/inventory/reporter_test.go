package inventory_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/nodeshape"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// node creates a member node with labels, cpu allocatable and a Ready condition.
func node(t *testing.T, name, cpu string, ready bool, labels map[string]string) *corev1.Node {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := env.Client.Create(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), n) })
	// The API server's admission taints a new node not-ready; the node lifecycle
	// controller, which envtest lacks, lifts it once the kubelet reports.
	n.Spec.Taints = nil
	if err := env.Client.Update(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	setStatus(t, n, cpu, ready)
	return n
}

func setStatus(t *testing.T, n *corev1.Node, cpu string, ready bool) {
	t.Helper()
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}
	if err := env.Client.Status().Update(t.Context(), n); err != nil {
		t.Fatal(err)
	}
}

// reported renders what the hub holds of the member: each slice's nodes, resolved from
// their shapes as the hub reads them (name, ready, cordoned, cpu, zone label, taint
// keys), and the MemberCluster's counts and cpu total.
func reported(t *testing.T) string {
	t.Helper()
	var slices musterv1.NodeSliceList
	if err := env.Client.List(t.Context(), &slices, client.InNamespace(musterv1.MemberNamespace(cluster))); err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, s := range slices.Items {
		fmt.Fprintf(&b, "%s(%d):", s.Name, s.NodeCount)
		for i := range s.Nodes {
			n := nodeshape.Resolve(&s.Nodes[i], s.Shapes)
			var taints []string
			for _, tn := range n.Taints {
				taints = append(taints, tn.Key)
			}
			fmt.Fprintf(&b, " %s ready=%t cordoned=%t cpu=%s zone=%s taints=%v;", n.Name, n.Ready, n.Unschedulable,
				n.Allocatable.Cpu(), n.Labels["zone"], taints)
		}
		b.WriteString(" | ")
	}
	var mc musterv1.MemberCluster
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: cluster}, &mc); err != nil {
		return err.Error()
	}
	if mc.Status.Nodes != nil {
		fmt.Fprintf(&b, "nodes total=%d ready=%d schedulable=%d cpu=%s", mc.Status.Nodes.Total, mc.Status.Nodes.Ready,
			mc.Status.Nodes.Schedulable, mc.Status.Allocatable.Cpu())
	}
	return b.String()
}

func waitReported(t *testing.T, want string) {
	t.Helper()
	envtest.Eventually(t, "the hub holds "+want, func() (bool, string) {
		got := reported(t)
		return got == want, got
	})
}

// TestNodeChangesReachTheHub: what changes on the member's nodes (added, relabelled,
// tainted, resized, cordoned, not ready, removed) reaches the cluster's NodeSlices and the
// MemberCluster's counts and totals, which count only ready nodes' resources.
func TestNodeChangesReachTheHub(t *testing.T) {
	n1 := node(t, "node-a", "4", true, map[string]string{"zone": "z1"})
	node(t, "node-b", "2", true, map[string]string{"zone": "z2"})
	const slice = "inv-0(2):"
	waitReported(t, slice+" node-a ready=true cordoned=false cpu=4 zone=z1 taints=[]; node-b ready=true cordoned=false cpu=2 zone=z2 taints=[]; | "+
		"nodes total=2 ready=2 schedulable=2 cpu=6")

	n1.Labels["zone"] = "z3"
	n1.Spec.Taints = []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	n1.Spec.Unschedulable = true
	if err := env.Client.Update(t.Context(), n1); err != nil {
		t.Fatal(err)
	}
	setStatus(t, n1, "8", true)
	waitReported(t, slice+" node-a ready=true cordoned=true cpu=8 zone=z3 taints=[gpu]; node-b ready=true cordoned=false cpu=2 zone=z2 taints=[]; | "+
		"nodes total=2 ready=2 schedulable=1 cpu=10")

	setStatus(t, n1, "8", false)
	waitReported(t, slice+" node-a ready=false cordoned=true cpu=8 zone=z3 taints=[gpu]; node-b ready=true cordoned=false cpu=2 zone=z2 taints=[]; | "+
		"nodes total=2 ready=1 schedulable=1 cpu=2")

	if err := env.Client.Delete(t.Context(), n1); err != nil {
		t.Fatal(err)
	}
	waitReported(t, "inv-0(1): node-b ready=true cordoned=false cpu=2 zone=z2 taints=[]; | nodes total=1 ready=1 schedulable=1 cpu=2")
}

// TestTheReportSaysTheAgentIsJoinedAndItsVersion: the MemberCluster shows the member's
// Kubernetes version, that the agent reports (Joined), and when it last did.
func TestTheReportSaysTheAgentIsJoinedAndItsVersion(t *testing.T) {
	node(t, "node-v", "1", true, nil)
	disco, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	version, err := disco.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	envtest.Eventually(t, "the report of node-v", func() (bool, string) {
		got := reported(t)
		return strings.Contains(got, "node-v ready=true"), got
	})
	var mc musterv1.MemberCluster
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: cluster}, &mc); err != nil {
		t.Fatal(err)
	}
	if mc.Status.Version != version.GitVersion {
		t.Errorf("version %q, want the member's %q", mc.Status.Version, version.GitVersion)
	}
	joined := meta.FindStatusCondition(mc.Status.Conditions, musterv1.MemberClusterJoined)
	if joined == nil || joined.Status != metav1.ConditionTrue || joined.Reason != musterv1.MemberClusterReasonAgentConnected {
		t.Errorf("Joined condition %+v", joined)
	}
	if mc.Status.LastInventoryReportTime == nil {
		t.Error("no report time: the hub cannot tell when the agent goes silent")
	}
}

// TestReportsBetweenResyncsDoNotListTheSlices: once the agent has listed its NodeSlices, a
// node change is written from what it last wrote, with no list of every slice from the
// hub; when another writer changed a slice behind its back, its next write conflicts, it
// lists again, and the hub ends up holding the member's nodes.
func TestReportsBetweenResyncsDoNotListTheSlices(t *testing.T) {
	n := node(t, "node-l", "2", true, map[string]string{"zone": "z1"})
	const slice = "inv-0(1): node-l ready=true cordoned=false cpu=2 zone=%s taints=[]; | nodes total=1 ready=1 schedulable=1 cpu=2"
	waitReported(t, fmt.Sprintf(slice, "z1"))
	lists := sliceLists.Load()
	for _, zone := range []string{"z2", "z3"} {
		n.Labels["zone"] = zone
		if err := env.Client.Update(t.Context(), n); err != nil {
			t.Fatal(err)
		}
		waitReported(t, fmt.Sprintf(slice, zone))
	}
	if got := sliceLists.Load() - lists; got != 0 {
		t.Errorf("%d lists of the NodeSlices for two node changes, want none", got)
	}

	// Another writer empties the slice: the agent's next update conflicts with it.
	var s musterv1.NodeSlice
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: musterv1.MemberNamespace(cluster), Name: "inv-0"}, &s); err != nil {
		t.Fatal(err)
	}
	s.Nodes, s.NodeCount = nil, 0
	if err := env.Client.Update(t.Context(), &s); err != nil {
		t.Fatal(err)
	}
	n.Labels["zone"] = "z4"
	if err := env.Client.Update(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	waitReported(t, fmt.Sprintf(slice, "z4"))
	if sliceLists.Load() == lists {
		t.Error("the agent wrote over a slice changed behind its back without reading it again")
	}
}
