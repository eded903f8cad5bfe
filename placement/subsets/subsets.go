// Package subsets decides how many of a workload's replicas each WorkloadSpread subset
// gets: subsets fill in order up to their caps, and what is left goes to the last one.
package subsets

import (
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Subset is what the assignment needs of one subset.
type Subset struct {
	// Max caps the subset; nil is unbounded.
	Max *intstr.IntOrString
	// Unschedulable marks a subset an Adaptive spread keeps pods off for now: it gets
	// nothing while another subset has room.
	Unschedulable bool
}

// Cap is the subset's cap for a workload of total replicas, or -1 when unbounded. Percents
// round up, as OpenKruise's WorkloadSpread does, so a small workload still reaches every
// subset with a non-zero percent.
func Cap(max *intstr.IntOrString, total int32) int32 {
	if max == nil {
		return -1
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(max, int(total), true)
	if err != nil || v < 0 {
		// Admission refuses such values; treat one that slipped through as closed.
		return 0
	}
	return int32(v)
}

// Assign gives total replicas to the subsets in order, each up to its cap, skipping
// unschedulable ones. What no schedulable subset can take goes to the last schedulable
// subset beyond its cap only when it is unbounded; otherwise it falls back to the
// unschedulable subsets in order, and what still remains is returned as unassigned.
// Lowering total therefore takes replicas from the last subsets first, and raising it
// fills the first subsets first.
func Assign(total int32, subsets []Subset) (replicas []int32, unassigned int32) {
	replicas = make([]int32, len(subsets))
	left := total
	fill := func(skipUnschedulable bool) {
		for i, s := range subsets {
			if left == 0 {
				return
			}
			if s.Unschedulable == skipUnschedulable {
				continue
			}
			room := Cap(s.Max, total) - replicas[i]
			if Cap(s.Max, total) < 0 {
				room = left
			}
			take := min(max(room, 0), left)
			replicas[i] += take
			left -= take
		}
	}
	fill(true)  // the schedulable subsets, in order
	fill(false) // then, only if they are full, the unschedulable ones
	return replicas, left
}
