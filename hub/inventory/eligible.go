package inventory

import (
	"crypto/sha256"
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

// EligibleCountByCluster counts, per cluster, the nodes that could run a pod of spec;
// clusters with no eligible node are left out. The hub's controllers weigh clusters by
// it; it builds no name per node.
func (inv *Inventory) EligibleCountByCluster(spec *corev1.PodSpec) map[string]int {
	out := map[string]int{}
	inv.eachFitting(spec, "", func(s *sliceIndex, fits bitmap) {
		if n := fits.count(); n > 0 {
			out[s.Cluster] += n
		}
	})
	return out
}

// eligibleNames returns the names of the nodes of cluster, or of every cluster when cluster
// is empty, that fit spec, sorted, by cluster; clusters with no eligible node are left out.
// One slice's names come sorted; only a cluster with more than one slice's is sorted.
func (inv *Inventory) eligibleNames(spec *corev1.PodSpec, cluster string) map[string][]string {
	out, merged := map[string][]string{}, map[string]bool{}
	inv.eachFitting(spec, cluster, func(s *sliceIndex, fits bitmap) {
		n := fits.count()
		if n == 0 {
			return
		}
		names := out[s.Cluster]
		merged[s.Cluster] = len(names) > 0
		names = slices.Grow(names, n)
		fits.each(func(i int32) { names = append(names, s.names[i]) })
		out[s.Cluster] = names
	})
	for cluster, more := range merged {
		if more {
			slices.Sort(out[cluster])
		}
	}
	return out
}

// eachFitting calls fn with each slice of cluster, or of every cluster when cluster is
// empty, and the positions of its nodes that fit spec. The label index narrows the nodes
// to check and nodefit decides each, unless the slice remembers the answer.
func (inv *Inventory) eachFitting(spec *corev1.PodSpec, cluster string, fn func(s *sliceIndex, fits bitmap)) {
	q := newQuery(spec)
	it, err := slicesOf(inv.db.Txn(false), cluster)
	if err != nil {
		return
	}
	for obj := it.Next(); obj != nil; obj = it.Next() {
		s := obj.(*sliceIndex)
		fn(s, s.fitting(q))
	}
}

// query is one eligible-node question, prepared once and asked of each slice in turn.
type query struct {
	key   [sha256.Size]byte
	tmpl  *nodefit.Template
	plan  plan
	reads nodefit.Reads
	// codes, hold, candidates and byKind are fitting's working space, reused from slice
	// to slice.
	codes, hold []uint64
	candidates  []int32
	byKind      kindVerdicts
}

func newQuery(spec *corev1.PodSpec) *query {
	tmpl := nodefit.NewTemplate(spec)
	return &query{key: nodefit.Fingerprint(spec), tmpl: tmpl, plan: planFor(spec), reads: tmpl.Reads()}
}

// scratch returns n numbers for kinds to fill, valid until the next call.
func (q *query) scratch(n int) []uint64 {
	if cap(q.codes) < n {
		q.codes = make([]uint64, n)
	}
	return q.codes[:n]
}

// holdScratch returns n zeroed bit sets for kinds, valid until the next call.
func (q *query) holdScratch(n int) []uint64 {
	if cap(q.hold) < n {
		q.hold = make([]uint64, n)
	}
	q.hold = q.hold[:n]
	clear(q.hold)
	return q.hold
}

func slicesOf(txn *memdb.Txn, cluster string) (memdb.ResultIterator, error) {
	if cluster == "" {
		return txn.Get(slicesTable, byID)
	}
	return txn.Get(slicesTable, byCluster, cluster)
}
