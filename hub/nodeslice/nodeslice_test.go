package nodeslice_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/inventory"
	"github.com/musterhq/muster/hub/nodeslice"
	"github.com/musterhq/muster/internal/testing/builders"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// memberNamespace creates cluster's hub namespace, where its agent writes NodeSlices.
func memberNamespace(t *testing.T, cluster string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: musterv1.MemberNamespace(cluster)}}
	if err := env.Client.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
}

// describe renders a cluster's nodes as the inventory holds them: name, ready,
// cordoned, cpu, a label and taints.
func describe(nodes []*corev1.Node) string {
	var b strings.Builder
	for _, n := range nodes {
		cpu := n.Status.Allocatable[corev1.ResourceCPU]
		fmt.Fprintf(&b, "%s ready=%s cordoned=%t cpu=%s zone=%s taints=%d;", n.Name, n.Status.Conditions[0].Status,
			n.Spec.Unschedulable, cpu.String(), n.Labels["zone"], len(n.Spec.Taints))
	}
	return b.String()
}

// waitNodes waits until the suite's inventory holds exactly want (describe's rendering)
// for cluster.
func waitNodes(t *testing.T, cluster, want string) {
	t.Helper()
	waitFor(t, inv, cluster, want)
}

// waitFor waits until inventory holds exactly want for cluster.
func waitFor(t *testing.T, inventory *inventory.Inventory, cluster, want string) {
	t.Helper()
	envtest.Eventually(t, "cluster "+cluster+" holds "+want, func() (bool, string) {
		got := describe(inventory.Nodes(cluster))
		return got == want, got
	})
}

// TestInventoryFollowsTheSlice: what the agent writes (nodes added, relabelled, tainted,
// resized, cordoned, gone not-ready, removed) reaches placement's inventory, and a
// deleted slice takes its nodes with it.
func TestInventoryFollowsTheSlice(t *testing.T) {
	const cluster = "follow"
	memberNamespace(t, cluster)
	zone := func(z string) func(*musterv1.NodeInfo) {
		return func(n *musterv1.NodeInfo) { n.Labels = map[string]string{"zone": z} }
	}
	slice := builders.MakeNodeSlice("nodes-0", cluster).Node("n1", "4", "8Gi", zone("a")).Node("n2", "2", "4Gi", zone("b")).Obj()
	if err := env.Client.Create(t.Context(), slice); err != nil {
		t.Fatal(err)
	}
	waitNodes(t, cluster, "n1 ready=True cordoned=false cpu=4 zone=a taints=0;n2 ready=True cordoned=false cpu=2 zone=b taints=0;")
	if got := inv.NodesWithLabel("zone", "b"); len(got) != 1 || got[0].Name != "n2" {
		t.Errorf("nodes labelled zone=b: %s", describe(got))
	}

	slice.Nodes[0].Labels["zone"] = "c"
	slice.Nodes[0].Taints = []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	slice.Nodes[0].Allocatable[corev1.ResourceCPU] = resource.MustParse("8")
	slice.Nodes[1].Unschedulable = true
	slice.Nodes[1].Ready = false
	if err := env.Client.Update(t.Context(), slice); err != nil {
		t.Fatal(err)
	}
	waitNodes(t, cluster, "n1 ready=True cordoned=false cpu=8 zone=c taints=1;n2 ready=False cordoned=true cpu=2 zone=b taints=0;")
	if capacity := inv.Capacity(cluster); capacity.Cpu().String() != "8" {
		t.Errorf("capacity counts the cordoned, not-ready node: cpu %s", capacity.Cpu())
	}

	slice.Nodes, slice.NodeCount = slice.Nodes[:1], 1
	if err := env.Client.Update(t.Context(), slice); err != nil {
		t.Fatal(err)
	}
	waitNodes(t, cluster, "n1 ready=True cordoned=false cpu=8 zone=c taints=1;")

	if err := env.Client.Delete(t.Context(), slice); err != nil {
		t.Fatal(err)
	}
	waitNodes(t, cluster, "")
}

// TestSlicesOfOneClusterAddUp: a cluster's nodes are the union of its slices, and deleting
// one slice removes only that slice's nodes.
func TestSlicesOfOneClusterAddUp(t *testing.T) {
	const cluster = "union"
	memberNamespace(t, cluster)
	first := builders.MakeNodeSlice("nodes-0", cluster).Node("a1", "1", "1Gi").Obj()
	second := builders.MakeNodeSlice("nodes-1", cluster).Node("b1", "2", "1Gi").Obj()
	for _, s := range []*musterv1.NodeSlice{first, second} {
		if err := env.Client.Create(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	waitNodes(t, cluster, "a1 ready=True cordoned=false cpu=1 zone= taints=0;b1 ready=True cordoned=false cpu=2 zone= taints=0;")
	if err := env.Client.Delete(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	waitNodes(t, cluster, "b1 ready=True cordoned=false cpu=2 zone= taints=0;")
}

// TestASliceCountsForItsNamespacesCluster: an agent can write only in its own member
// namespace, so a slice naming another cluster still places its nodes in the namespace's
// cluster, never in the one it names.
func TestASliceCountsForItsNamespacesCluster(t *testing.T) {
	memberNamespace(t, "honest")
	memberNamespace(t, "spoofer")
	victim := builders.MakeNodeSlice("nodes-0", "honest").Node("real", "1", "1Gi").Obj()
	if err := env.Client.Create(t.Context(), victim); err != nil {
		t.Fatal(err)
	}
	spoof := builders.MakeNodeSlice("nodes-0", "spoofer").Node("fake", "64", "1Ti").Obj()
	spoof.ClusterName = "honest"
	if err := env.Client.Create(t.Context(), spoof); err != nil {
		t.Fatal(err)
	}
	waitNodes(t, "spoofer", "fake ready=True cordoned=false cpu=64 zone= taints=0;")
	if got := describe(inv.Nodes("honest")); got != "real ready=True cordoned=false cpu=1 zone= taints=0;" {
		t.Errorf("cluster honest holds %s", got)
	}
}

// TestSlicesOutsideMemberNamespacesAreIgnored: a NodeSlice outside any member namespace
// (written by someone else than an agent) reaches no cluster's inventory, even one it names.
func TestSlicesOutsideMemberNamespacesAreIgnored(t *testing.T) {
	own := inventory.New()
	store := &nodeslice.Store{Inventory: own}
	// "stray" is no member namespace; "muster-member-" is the prefix with no cluster name.
	for _, ns := range []string{"stray", musterv1.MemberNamespacePrefix} {
		slice := builders.MakeNodeSlice("nodes-0", "stray").Node("n", "1", "1Gi").Obj()
		slice.Namespace = ns
		if err := store.Add(slice); err != nil {
			t.Errorf("namespace %q: Add = %v", ns, err)
		}
	}
	for _, cluster := range []string{"stray", ""} {
		if got := own.Nodes(cluster); len(got) != 0 {
			t.Errorf("cluster %q holds %s", cluster, describe(got))
		}
	}
	if got := own.NodesWithLabel("kubernetes.io/hostname", "n"); len(got) != 0 {
		t.Errorf("the ignored slice's node is in the inventory: %s", describe(got))
	}
}

// TestALoaderStartedAgainCatchesUpWithTheSlices: a hub that starts (a restart, a new
// leader) with an inventory loaded before lists the slices again. The inventory then holds
// them as they are now, changed ones included, and none of the slices deleted while no
// loader ran, whose delete it never saw.
func TestALoaderStartedAgainCatchesUpWithTheSlices(t *testing.T) {
	const cluster = "restarted"
	memberNamespace(t, cluster)
	own := inventory.New()
	kept := builders.MakeNodeSlice("nodes-0", cluster).Node("k", "1", "1Gi").Obj()
	gone := builders.MakeNodeSlice("nodes-1", cluster).Node("g", "1", "1Gi").Obj()
	for _, s := range []*musterv1.NodeSlice{kept, gone} {
		if err := env.Client.Create(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	stop := startLoader(t, own)
	waitFor(t, own, cluster, "g ready=True cordoned=false cpu=1 zone= taints=0;k ready=True cordoned=false cpu=1 zone= taints=0;")
	stop()

	kept.Nodes[0].Allocatable[corev1.ResourceCPU] = resource.MustParse("3")
	if err := env.Client.Update(t.Context(), kept); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(t.Context(), gone); err != nil {
		t.Fatal(err)
	}
	startLoader(t, own)
	waitFor(t, own, cluster, "k ready=True cordoned=false cpu=3 zone= taints=0;")
}

// startLoader runs a Loader of its own into inv until the test ends or stop is called.
func startLoader(t *testing.T, inv *inventory.Inventory) (stop func()) {
	t.Helper()
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = (&nodeslice.Loader{Client: c, Inventory: inv}).Start(ctx)
	}()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}
