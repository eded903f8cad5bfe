package inventory

import (
	"slices"

	"github.com/hashicorp/go-memdb"

	corev1 "k8s.io/api/core/v1"

	"github.com/musterhq/muster/placement/nodefit"
)

// EligibleNodes returns the names of a cluster's nodes that could run a pod of spec.
func (inv *Inventory) EligibleNodes(cluster string, spec *corev1.PodSpec) []string {
	if cluster == "" {
		return nil
	}
	return inv.eligibleNames(spec, cluster)[cluster]
}

// EligibleNodesByCluster answers EligibleNodes for every cluster at once; clusters with
// no eligible node are left out.
func (inv *Inventory) EligibleNodesByCluster(spec *corev1.PodSpec) map[string][]string {
	return inv.eligibleNames(spec, "")
}

// EligibleCountByCluster counts, per cluster, the nodes that could run a pod of spec;
// clusters with no eligible node are left out. It is EligibleNodesByCluster for callers
// that weigh clusters by size, without a name per node.
func (inv *Inventory) EligibleCountByCluster(spec *corev1.PodSpec) map[string]int {
	out := map[string]int{}
	inv.eachEligible(spec, "", func(cluster string, _ *corev1.Node) { out[cluster]++ })
	return out
}

func (inv *Inventory) eligibleNames(spec *corev1.PodSpec, cluster string) map[string][]string {
	out := map[string][]string{}
	inv.eachEligible(spec, cluster, func(cluster string, n *corev1.Node) {
		out[cluster] = append(out[cluster], n.Name)
	})
	for _, names := range out {
		slices.Sort(names)
	}
	return out
}

// eachEligible calls fn for every node of cluster, or of every cluster when cluster is
// empty, that fits spec. The label index narrows the nodes to check; nodefit decides each.
func (inv *Inventory) eachEligible(spec *corev1.PodSpec, cluster string, fn func(cluster string, n *corev1.Node)) {
	tmpl := nodefit.NewTemplate(spec)
	p := planFor(spec)
	it, err := slicesOf(inv.db.Txn(false), cluster)
	if err != nil {
		return
	}
	for obj := it.Next(); obj != nil; obj = it.Next() {
		s := obj.(*sliceIndex)
		s.candidates(p, func(i int32) {
			if n := s.nodes[i]; tmpl.Check(n) == nodefit.Fits {
				fn(s.Cluster, n)
			}
		})
	}
}

func slicesOf(txn *memdb.Txn, cluster string) (memdb.ResultIterator, error) {
	if cluster == "" {
		return txn.Get(slicesTable, byID)
	}
	return txn.Get(slicesTable, byCluster, cluster)
}
