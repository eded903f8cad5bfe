package inventory

import (
	"math/bits"
	"slices"
)

// kinds numbers each of the slice's nodes, in codes, by what a template's check reads of
// it (nodefit.Reads): its state, which of the template's requests its allocatable holds,
// and, for each label key the template names, whether the node has the key and
// which of the named values it has. Nodes with one number fit the template alike, so
// fitting checks one node per number. The numbers come from the index's arrays and
// postings, without reading a node. kinds returns how many numbers there may be, or
// false, and every node must be checked, when the template reads node names or the
// numbers would overflow.
func (s *sliceIndex) kinds(q *query, codes []uint64) (uint64, bool) {
	reads := q.reads
	if reads.Name {
		return 0, false
	}
	for i, state := range s.state {
		codes[i] = uint64(state)
	}
	// States are at most the nodes, fewer than 2^31, and requests at most maxRequestBits:
	// their product fits in 64 bits.
	stride := uint64(s.states)
	if len(reads.Requests) > 0 {
		// A node's allocatable reads as which requests it holds: one bit each.
		if len(reads.Requests) > maxRequestBits {
			return 0, false
		}
		hold, bit := q.holdScratch(len(s.lists)), uint64(1)
		for name, want := range reads.Requests {
			s.holding(name, want, bit, hold)
			bit <<= 1
		}
		for i, list := range s.allocatable {
			codes[i] += hold[list] * stride
		}
		stride *= bit
	}
	for key, read := range reads.Labels {
		classes, other := uint64(1), uint64(0) // class 0: the node lacks the key
		for value, positions := range s.labels[key] {
			var class uint64
			switch {
			case read.ByValue || slices.Contains(read.Values, value):
				class = classes
				classes++
			case other == 0:
				other = classes
				classes++
				class = other
			default:
				class = other
			}
			// class < classes: if stride × classes fits in 64 bits, so do these sums; if
			// not, kinds gives up below and the codes go unread.
			for _, i := range positions {
				codes[i] += class * stride
			}
		}
		hi, lo := bits.Mul64(stride, classes)
		if hi != 0 {
			return 0, false
		}
		stride = lo
	}
	return stride, true
}

// maxRequestBits bounds the requests whose holding kinds tell apart in bits.
const maxRequestBits = 24

// kindVerdicts remembers whether the nodes of each kind fit: in an array, indexed by the
// kind's number, when the numbers are few, else in a map.
type kindVerdicts struct {
	dense  []int8 // 0 unknown, 1 fits, -1 does not
	sparse map[uint64]bool
}

// denseKinds bounds the array: above it, kinds are looked up in a map.
const denseKinds = 1 << 12

func (v *kindVerdicts) reset(kinds uint64) {
	if kinds > denseKinds {
		v.dense, v.sparse = v.dense[:0], map[uint64]bool{}
		return
	}
	v.sparse = nil
	if uint64(cap(v.dense)) < kinds {
		v.dense = make([]int8, kinds)
	}
	v.dense = v.dense[:kinds]
	clear(v.dense)
}

// fits returns the verdict remembered for kind, or asks check and remembers its answer.
func (v *kindVerdicts) fits(kind uint64, check func() bool) bool {
	if v.sparse != nil {
		fit, ok := v.sparse[kind]
		if !ok {
			fit = check()
			v.sparse[kind] = fit
		}
		return fit
	}
	if known := v.dense[kind]; known != 0 {
		return known > 0
	}
	fit := check()
	v.dense[kind] = -1
	if fit {
		v.dense[kind] = 1
	}
	return fit
}
