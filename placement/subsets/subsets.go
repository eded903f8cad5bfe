// Package subsets decides how many of a workload's replicas each WorkloadSpread subset
// gets: subsets fill in order up to their caps, what is left goes to the last one, and a
// change of the total moves as few replicas as it can; within a subset, its replicas are
// divided among its clusters (Divide).
package subsets

import (
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Subset is what the assignment needs of one subset.
type Subset struct {
	// Max caps the subset; nil is unbounded.
	Max *intstr.IntOrString
	// Current is the number of replicas the subset holds now.
	Current int32
	// Unschedulable marks a subset an Adaptive spread keeps pods off for now: it keeps
	// only Keep of its replicas (the ones that run) and gets new ones only when no
	// schedulable subset has room.
	Unschedulable bool
	Keep          int32
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

// Rebalance returns each subset's replicas for a workload of total replicas, starting
// from what the subsets hold now so that running replicas stay where they are:
//
//   - an unschedulable subset gives up the replicas it cannot run, and every subset gives
//     up its excess over its cap;
//   - above total, replicas leave the last subsets first;
//   - below total, replicas go to the schedulable subsets in order up to their caps, then
//     to the unschedulable ones, and whatever no cap admits goes to the last subset.
//
// From empty subsets this is plain fill-in-order, so lowering the total takes replicas
// from the last subsets and raising it fills the first subsets to their caps first.
func Rebalance(total int32, subsets []Subset) []int32 {
	out := make([]int32, len(subsets))
	if len(subsets) == 0 {
		return out
	}
	total = max(total, 0)
	caps := make([]int32, len(subsets))
	var sum int32
	for i, s := range subsets {
		caps[i] = Cap(s.Max, total)
		out[i] = max(s.Current, 0)
		if s.Unschedulable {
			out[i] = min(out[i], max(s.Keep, 0))
		}
		if caps[i] >= 0 {
			out[i] = min(out[i], caps[i])
		}
		sum += out[i]
	}
	for i := len(out) - 1; i >= 0 && sum > total; i-- {
		take := min(out[i], sum-total)
		out[i] -= take
		sum -= take
	}
	fill := func(unschedulable bool) {
		for i, s := range subsets {
			if sum == total {
				return
			}
			if s.Unschedulable != unschedulable {
				continue
			}
			room := total - sum
			if caps[i] >= 0 {
				room = min(room, max(caps[i]-out[i], 0))
			}
			out[i] += room
			sum += room
		}
	}
	fill(false)
	fill(true)
	out[len(out)-1] += total - sum
	return out
}
