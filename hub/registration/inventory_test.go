package registration_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// maxNodesPerMember is the suite hub's --max-nodes-per-member.
const maxNodesPerMember = 1000

// reportNodes writes the node count an agent reports on its MemberCluster.
func reportNodes(t *testing.T, name string, total int32) {
	t.Helper()
	mc, err := getCluster(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(mc.DeepCopy())
	mc.Status.Nodes = &musterv1.NodeCounts{Total: total, Ready: total, Schedulable: total}
	if err := env.Client.Status().Patch(t.Context(), mc, patch); err != nil {
		t.Fatal(err)
	}
}

func inventoryComplete(name string, want metav1.ConditionStatus) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		mc, err := getCluster(ctx, name)
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(mc.Status.Conditions, musterv1.MemberClusterInventoryComplete)
		return c != nil && c.Status == want, nil
	}
}

// TestAMemberOverItsInventoryLimitIsToldSo: the hub refuses a member's NodeSlices past its
// limit (the webhook); the member's MemberCluster says so, with an event, while placement
// keeps the nodes it has, and says so no longer once the member is back within it.
func TestAMemberOverItsInventoryLimitIsToldSo(t *testing.T) {
	name := "inventory-limit"
	newCluster(t, name, true)
	reportNodes(t, name, 1000)
	eventually(t, "InventoryComplete=True at the limit", inventoryComplete(name, metav1.ConditionTrue))

	reportNodes(t, name, 1200)
	eventually(t, "InventoryComplete=False over the limit", inventoryComplete(name, metav1.ConditionFalse))
	expectEvent(t, name, musterv1.MemberClusterReasonInventoryLimitReached, "the member reports 1200 nodes, more than the 1000 the hub keeps")

	reportNodes(t, name, 900)
	eventually(t, "InventoryComplete=True back within the limit", inventoryComplete(name, metav1.ConditionTrue))
}
