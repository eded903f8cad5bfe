// Package parallelism resolves a BroadcastJob's parallelism (a number or a percent of the
// eligible nodes) to a number of pods, and divides a fleet-wide budget among clusters
// without ever letting the fleet exceed it while clusters pick up their new shares.
package parallelism

import (
	"cmp"
	"math"
	"slices"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Resolve turns spec.parallelism into a pod count: nil means no cap; a percent is taken
// of desired and rounded up, so any non-zero percent of a non-empty job runs a pod.
func Resolve(p *intstr.IntOrString, desired int32) *int32 {
	if p == nil {
		return nil
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(p, int(desired), true)
	if err != nil {
		// Admission rejects malformed values; one that slipped through caps at zero
		// rather than at "unlimited".
		n = 0
	}
	n = min(max(n, 0), math.MaxInt32)
	v := int32(n)
	return &v
}

// Cluster is one cluster's side of a fleet-wide parallelism budget.
type Cluster struct {
	Name string
	// Remaining counts the pods the cluster still has to run, running ones included.
	Remaining int32
	// Active is the number of running pods the cluster last reported.
	Active int32
	// Assigned is the share currently written to the cluster's shard; nil before the
	// cluster has a shard.
	Assigned *int32
	// Applied is the parallelism the cluster reports it works with; nil before it reported.
	Applied *int32
}

// settled reports whether the cluster has picked up its assigned share, so that its next
// change can be accounted for exactly.
func (c Cluster) settled() bool {
	return c.Assigned == nil || (c.Applied != nil && *c.Applied == *c.Assigned)
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// Divide splits budget among clusters in proportion to their remaining pods and returns
// every cluster's new share.
//
// Clusters act on a new share only when they see it, and a lower share stops new pods
// without stopping running ones. So Divide counts each cluster at the most it could be
// running: a cluster that has not yet reported its current share keeps it unchanged and
// counts at the larger of its old and new share; a settled cluster counts at the larger
// of its share and its active pods. Shares grow only out of what is left of budget, so
// the fleet never runs more than budget pods however late the clusters are.
func Divide(budget int32, clusters []Cluster) map[string]int32 {
	target := proportional(budget, clusters)
	shares := make(map[string]int32, len(clusters))
	used := int32(0)
	var growing []int
	for i, c := range clusters {
		current := deref(c.Assigned)
		switch {
		case !c.settled():
			shares[c.Name] = current
			used += max(current, deref(c.Applied), c.Active)
		case target[i] <= current:
			shares[c.Name] = target[i]
			used += max(target[i], c.Active)
		default:
			shares[c.Name] = current
			used += max(current, c.Active)
			growing = append(growing, i)
		}
	}
	for _, i := range growing {
		c := clusters[i]
		current := shares[c.Name]
		before := max(current, c.Active)
		free := budget - used
		if free <= 0 {
			break
		}
		// Raising the share above the active pods costs budget; up to them it is free.
		grant := min(target[i], max(current, c.Active)+free)
		shares[c.Name] = grant
		used += max(grant, c.Active) - before
	}
	return shares
}

// proportional is the ideal division of budget, ignoring what the clusters run now:
// shares in proportion to the remaining pods, none above its cluster's remaining pods,
// the rounding remainder going to the largest fractions (ties by order).
func proportional(budget int32, clusters []Cluster) []int32 {
	out := make([]int32, len(clusters))
	var total int64
	for _, c := range clusters {
		total += int64(max(c.Remaining, 0))
	}
	if total == 0 {
		return out
	}
	if int64(budget) >= total {
		for i, c := range clusters {
			out[i] = max(c.Remaining, 0)
		}
		return out
	}
	fractions := make([]int64, len(clusters))
	order := make([]int, len(clusters))
	left := int64(budget)
	for i, c := range clusters {
		num := int64(budget) * int64(max(c.Remaining, 0))
		out[i] = int32(num / total)
		fractions[i] = num % total
		order[i] = i
		left -= int64(out[i])
	}
	// Flooring loses less than one pod per cluster, so each cluster gets at most one
	// more, and budget < total keeps every share below its cluster's remaining pods.
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(fractions[b], fractions[a]) })
	for _, i := range order[:left] {
		out[i]++
	}
	return out
}
