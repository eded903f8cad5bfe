//go:build e2e

package join

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/e2e/framework/local"
)

// Adding five nodes, cordoning one and relabelling one in member1 shows in the hub's
// inventory within 5s.
func TestInventoryFollowsNodeChanges(t *testing.T) {
	ctx := t.Context()
	member := memberNamed("member1")
	var added []*corev1.Node
	for i := range 5 {
		added = append(added, local.NewNode(fmt.Sprintf("member1-extra-%d", i)))
	}
	changed := time.Now()
	if err := local.CreateNodes(ctx, member.Clientset, added...); err != nil {
		t.Fatal(err)
	}
	cordoned, relabelled := "member1-node-0", "member1-node-1"
	patchNode(t, member, cordoned, func(n *corev1.Node) { n.Spec.Unschedulable = true })
	patchNode(t, member, relabelled, func(n *corev1.Node) { n.Labels["pool"] = "gpu" })

	want := nodesPerMember + len(added)
	err := framework.Until(ctx, 5*time.Second, "the hub inventory to show the changes", func(context.Context) (bool, string, error) {
		nodes := hubs.Inventory.Nodes("member1")
		if len(nodes) != want {
			return false, fmt.Sprintf("%d nodes", len(nodes)), nil
		}
		ready := 0
		for _, n := range nodes {
			if n.Status.Conditions[0].Status == corev1.ConditionTrue {
				ready++
			}
		}
		if ready != want {
			return false, fmt.Sprintf("%d of %d ready", ready, want), nil
		}
		gpu := hubs.Inventory.NodesWithLabel("pool", "gpu")
		if len(gpu) != 1 || gpu[0].Name != relabelled {
			return false, fmt.Sprintf("%d gpu nodes", len(gpu)), nil
		}
		eligible := hubs.Inventory.EligibleNodes("member1", &corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}})
		if slices.Contains(eligible, cordoned) || len(eligible) != want-1 {
			return false, fmt.Sprintf("eligible %v", eligible), nil
		}
		return true, "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("hub inventory reflected 5 new nodes, a cordon and a relabel %s after the changes", time.Since(changed).Round(10*time.Millisecond))
	if others := hubs.Inventory.Nodes("member2"); len(others) != nodesPerMember {
		t.Errorf("member2 has %d nodes in the inventory, want %d: one member's changes leaked into another's", len(others), nodesPerMember)
	}
}

func patchNode(t *testing.T, c *framework.Cluster, name string, change func(*corev1.Node)) {
	t.Helper()
	var n corev1.Node
	if err := c.Client.Get(t.Context(), types.NamespacedName{Name: name}, &n); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(n.DeepCopy())
	change(&n)
	if err := c.Client.Patch(t.Context(), &n, patch); err != nil {
		t.Fatal(err)
	}
}
