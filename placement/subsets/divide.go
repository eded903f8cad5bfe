package subsets

import "github.com/musterhq/muster/placement/division"

// Divide divides a subset's n replicas among its clusters, starting from what each keeps
// now: clusters the subset no longer holds give theirs up, a smaller n takes from the last
// holding clusters first, and a larger n goes to the clusters that take new replicas
// (clusters) in proportion to the nodes that fit (evenly when none is known to fit).
// holding lists the clusters where replicas may stay; both lists are in fill order.
func Divide(n int32, kept map[string]int32, clusters, holding []string, fit map[string]int) map[string]int32 {
	out := map[string]int32{}
	var sum int32
	for _, c := range holding {
		out[c] = kept[c]
		sum += kept[c]
	}
	for i := len(holding) - 1; i >= 0 && sum > n; i-- {
		take := min(out[holding[i]], sum-n)
		out[holding[i]] -= take
		sum -= take
	}
	if sum < n && len(clusters) > 0 {
		for i, add := range division.Split(n-sum, division.FitWeights(clusters, fit)) {
			out[clusters[i]] += add
		}
	}
	return out
}
