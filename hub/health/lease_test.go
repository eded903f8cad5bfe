package health

import (
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestOnlyTheAgentsLeaseInAMemberNamespaceCounts: a lease names the cluster whose member
// namespace holds it, and only the agent's lease does; other leases (leader election,
// anything in another namespace) reach no cluster, so they cannot keep one available.
func TestOnlyTheAgentsLeaseInAMemberNamespaceCounts(t *testing.T) {
	for _, c := range []struct {
		namespace, name string
		want            string // the cluster reconciled; empty: none
	}{
		{"muster-member-east", LeaseName, "east"},
		{"muster-member-a-b", LeaseName, "a-b"},
		{"muster-member-east", "muster-agent-leader", ""},
		{"muster-system", LeaseName, ""},
		{"kube-node-lease", "east", ""},
		{"east", LeaseName, ""},
	} {
		reqs := clusterOfLease(t.Context(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: c.namespace, Name: c.name}})
		var got string
		if len(reqs) == 1 {
			got = reqs[0].Name
			if reqs[0].Namespace != "" {
				t.Errorf("lease %s/%s maps to a namespaced request %v", c.namespace, c.name, reqs[0])
			}
		}
		if len(reqs) > 1 || got != c.want {
			t.Errorf("lease %s/%s reconciles %v, want cluster %q", c.namespace, c.name, reqs, c.want)
		}
	}
}
