package inventory

import (
	"crypto/sha256"

	corev1 "k8s.io/api/core/v1"

	"github.com/musterhq/muster/placement/nodefit"
)

// sliceIndex is one NodeSlice's nodes with a label index over them. It is built when the
// slice is loaded and never changed, so queries read it from any memdb snapshot without
// locks. It holds exactly the rows of the nodes table that the slice owns.
type sliceIndex struct {
	Key     string // <namespace>/<name> of the NodeSlice
	Cluster string
	nodes   []*corev1.Node // sorted by name
	// labels maps key → value → positions in nodes, ascending.
	labels map[string]map[string][]int32
	// verdicts remembers the fitting nodes of the templates asked lately.
	verdicts verdicts
}

// indexSlice builds the index of rows, which must be sorted by name.
func indexSlice(key, cluster string, rows []*node) *sliceIndex {
	s := &sliceIndex{Key: key, Cluster: cluster, nodes: make([]*corev1.Node, len(rows)), labels: map[string]map[string][]int32{}}
	for i, row := range rows {
		s.nodes[i] = row.Node
		for k, v := range row.Node.Labels {
			values := s.labels[k]
			if values == nil {
				values = map[string][]int32{}
				s.labels[k] = values
			}
			values[v] = append(values[v], int32(i))
		}
	}
	return s
}

// candidates calls fn with the position of every node that the plan cannot rule out, in
// ascending order, each once.
func (s *sliceIndex) candidates(p plan, fn func(i int32)) {
	if p.scan {
		for i := range s.nodes {
			fn(int32(i))
		}
		return
	}
	var lists [][]int32
	for _, alt := range p.alternatives {
		lists = append(lists, s.postings(s.smallest(alt))...)
	}
	switch len(lists) {
	case 0:
		return
	case 1:
		for _, i := range lists[0] {
			fn(i)
		}
		return
	}
	// Alternatives may overlap; a bitmap yields each node once and in order.
	seen := newBitmap(len(s.nodes))
	for _, list := range lists {
		for _, i := range list {
			seen.set(i)
		}
	}
	seen.each(fn)
}

// fitting returns the positions of the nodes that fit the template with fingerprint key,
// checking the plan's candidates unless a verdict for it is remembered.
func (s *sliceIndex) fitting(key [sha256.Size]byte, tmpl *nodefit.Template, p plan) bitmap {
	if fits, ok := s.verdicts.get(key); ok {
		return fits
	}
	fits := newBitmap(len(s.nodes))
	s.candidates(p, func(i int32) {
		if tmpl.Check(s.nodes[i]) == nodefit.Fits {
			fits.set(i)
		}
	})
	s.verdicts.put(key, fits)
	return fits
}

// smallest returns the lookup of alt that holds the fewest of this slice's nodes.
func (s *sliceIndex) smallest(alt []lookup) lookup {
	best, bestSize := alt[0], -1
	for _, l := range alt {
		size := 0
		for _, list := range s.postings(l) {
			size += len(list)
		}
		if bestSize < 0 || size < bestSize {
			best, bestSize = l, size
		}
	}
	return best
}

// postings returns the disjoint position lists of the nodes a lookup names.
func (s *sliceIndex) postings(l lookup) [][]int32 {
	values := s.labels[l.key]
	if l.anyValue {
		out := make([][]int32, 0, len(values))
		for _, list := range values {
			out = append(out, list)
		}
		return out
	}
	out := make([][]int32, 0, len(l.values))
	for _, v := range l.values {
		if list, ok := values[v]; ok {
			out = append(out, list)
		}
	}
	return out
}
