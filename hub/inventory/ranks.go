package inventory

import (
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// resourceRanks orders a slice's allocatable lists by their quantity of one resource, so
// that a query finds which lists hold a request with one binary search: of[list] is 0 when
// the list lacks the resource, else the rank of its quantity among the distinct ones, from
// 1 up; holder[rank-1] is a list with that quantity.
type resourceRanks struct {
	of     []uint32
	holder []uint32
}

// rankLists ranks lists for every resource any of them has.
func rankLists(lists []corev1.ResourceList) map[corev1.ResourceName]resourceRanks {
	having := map[corev1.ResourceName][]uint32{}
	for id, list := range lists {
		for name := range list {
			having[name] = append(having[name], uint32(id))
		}
	}
	out := make(map[corev1.ResourceName]resourceRanks, len(having))
	for name, ids := range having {
		quantity := func(id uint32) resource.Quantity { return lists[id][name] }
		slices.SortFunc(ids, func(a, b uint32) int { q := quantity(a); return q.Cmp(quantity(b)) })
		r := resourceRanks{of: make([]uint32, len(lists))}
		for k, id := range ids {
			if q := quantity(id); k == 0 || q.Cmp(quantity(ids[k-1])) != 0 {
				r.holder = append(r.holder, id)
			}
			r.of[id] = uint32(len(r.holder))
		}
		out[name] = r
	}
	return out
}

// holding sets bit in hold[list] for each list with at least want of name.
func (s *sliceIndex) holding(name corev1.ResourceName, want resource.Quantity, bit uint64, hold []uint64) {
	r, ok := s.ranks[name]
	if !ok {
		return
	}
	// The first rank at least want; ranks from it up hold the request.
	first := uint32(sort.Search(len(r.holder), func(k int) bool {
		q := s.lists[r.holder[k]][name]
		return q.Cmp(want) >= 0
	})) + 1
	for list, rank := range r.of {
		if rank >= first {
			hold[list] |= bit
		}
	}
}
