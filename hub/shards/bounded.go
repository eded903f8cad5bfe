package shards

import (
	"slices"
	"sort"
)

// Bounded keeps at most limit of entries, those that rank first (the lowest rank; ties
// go to the earlier entry), in their original order, and says how many it left out. A
// status lists its shards this way so that its size does not grow with the number of
// member clusters, while the shards a user looks for first (failed, unfinished) stay in it.
func Bounded[T any](entries []T, limit int, rank func(T) int) ([]T, int) {
	if len(entries) <= limit {
		return entries, 0
	}
	order := make([]int, len(entries))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rank(entries[order[a]]) < rank(entries[order[b]]) })
	kept := order[:limit]
	slices.Sort(kept)
	out := make([]T, 0, limit)
	for _, i := range kept {
		out = append(out, entries[i])
	}
	return out, len(entries) - limit
}
