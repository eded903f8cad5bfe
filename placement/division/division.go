// Package division splits a job's parallelism and completions among clusters by weight,
// and gives Indexed shards contiguous ranges of the fleet's completion indexes.
package division

import (
	"cmp"
	"slices"
)

// Split divides total into parts proportional to weights (largest remainder, ties to the
// earlier part). Parts with weight 0 get nothing; all-zero weights give nothing.
func Split(total int32, weights []int32) []int32 {
	out := make([]int32, len(weights))
	var sum int64
	for _, w := range weights {
		sum += int64(max(w, 0))
	}
	if sum == 0 || total <= 0 {
		return out
	}
	rest := make([]int64, len(weights))
	order := make([]int, len(weights))
	left := int64(total)
	for i, w := range weights {
		share := int64(total) * int64(max(w, 0))
		out[i] = int32(share / sum)
		rest[i] = share % sum
		order[i] = i
		left -= int64(out[i])
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rest[b], rest[a]) })
	for _, i := range order[:left] {
		out[i]++
	}
	return out
}

// FitWeights weighs clusters by the nodes that fit their pods (fit, by cluster name),
// evenly when none is known to fit.
func FitWeights(clusters []string, fit map[string]int) []int32 {
	weights := make([]int32, len(clusters))
	for i, c := range clusters {
		weights[i] = int32(fit[c])
	}
	if !slices.ContainsFunc(weights, func(w int32) bool { return w > 0 }) {
		for i := range weights {
			weights[i] = 1
		}
	}
	return weights
}

// Range is a contiguous range of completion indexes, [Start, End).
type Range struct{ Start, End int32 }

// Ranges lays completions parts end to end from index 0.
func Ranges(parts []int32) []Range {
	out := make([]Range, len(parts))
	var next int32
	for i, n := range parts {
		out[i] = Range{Start: next, End: next + n}
		next += n
	}
	return out
}
