package inventory

import (
	"math/bits"

	corev1 "k8s.io/api/core/v1"
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
}

// indexSlice builds the index of rows, which must be sorted by name.
func indexSlice(key, cluster string, rows []*node) *sliceIndex {
	s := &sliceIndex{Key: key, Cluster: cluster, nodes: make([]*corev1.Node, len(rows)), labels: map[string]map[string][]int32{}}
	for i, row := range rows {
		s.nodes[i] = row.Node
		for k, v := range row.Labels {
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
	if len(lists) == 1 {
		for _, i := range lists[0] {
			fn(i)
		}
		return
	}
	// Alternatives may overlap; a bitmap yields each node once and in order.
	seen := make([]uint64, (len(s.nodes)+63)/64)
	for _, list := range lists {
		for _, i := range list {
			seen[i/64] |= 1 << (i % 64)
		}
	}
	for w, word := range seen {
		for ; word != 0; word &= word - 1 {
			fn(int32(w*64 + bits.TrailingZeros64(word)))
		}
	}
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
