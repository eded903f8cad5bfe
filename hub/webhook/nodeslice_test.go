package webhook_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// maxNodesPerMember is the suite hub's --max-nodes-per-member: two NodeSlices a member.
const maxNodesPerMember = 1000

func nodeSlice(name, cluster, namespace string) *musterv1.NodeSlice {
	return &musterv1.NodeSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Namespace: namespace},
		ClusterName: cluster,
		Nodes:       []musterv1.NodeInfo{{Name: "node-0", Ready: true}},
		NodeCount:   1,
	}
}

// TestAMemberCannotGrowTheHubWithoutBound: the demo fleet's member1 created 201 slices
// of 500 nodes and one naming member2, and the hub took them all. A slice must name the
// cluster whose namespace holds it, and a member holds at most the hub's limit of them;
// its slices within the limit, and their rewrites, pass.
func TestAMemberCannotGrowTheHubWithoutBound(t *testing.T) {
	const cluster = "inventory-limit"
	ns := musterv1.MemberNamespace(cluster)
	if err := env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	expectRefused(t, nodeSlice("forged", "member2", ns), []refusal{{"clusterName",
		fmt.Sprintf(`Invalid value: "member2": a NodeSlice in namespace %s must name its cluster, %q: a member reports its own nodes only`, ns, cluster)}})

	for i := range 2 {
		expectAdmitted(t, nodeSlice(fmt.Sprintf("slice-%d", i), cluster, ns))
	}
	expectRefused(t, nodeSlice("slice-2", cluster, ns), []refusal{{"metadata.namespace", fmt.Sprintf(
		"Forbidden: cluster %s already has 2 NodeSlices, the most the hub keeps for one member (--max-nodes-per-member=1000, 500 nodes a slice); placement uses the nodes they hold", cluster)}})

	// The agent rewrites its slices as nodes change: that never calls the hub.
	var s musterv1.NodeSlice
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "slice-0"}, &s); err != nil {
		t.Fatal(err)
	}
	s.Nodes = append(s.Nodes, musterv1.NodeInfo{Name: "node-1"})
	s.NodeCount = 2
	if err := env.Client.Update(t.Context(), &s); err != nil {
		t.Fatalf("rewriting a slice within the limit: %v", err)
	}
	// A slice deleted frees its place.
	if err := env.Client.Delete(t.Context(), &s); err != nil {
		t.Fatal(err)
	}
	expectAdmitted(t, nodeSlice("slice-2", cluster, ns))
}
