package parallelism

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// FuzzDivide: a parallelism of any form resolves to a non-negative count, and dividing
// it gives every cluster a non-negative share without panicking, whatever the clusters
// reported.
func FuzzDivide(f *testing.F) {
	f.Add("30%", int32(1000), int32(5), int32(2), int32(3), true, int32(7), int32(1))
	f.Add("2147483647", int32(2147483647), int32(2147483647), int32(0), int32(0), false, int32(0), int32(0))
	f.Add("-1%", int32(-4), int32(-1), int32(-1), int32(-1), true, int32(-1), int32(-1))
	f.Fuzz(func(t *testing.T, p string, desired, remaining1, active1, assigned1 int32, reported1 bool, remaining2, active2 int32) {
		v := intstr.Parse(p)
		budget := Resolve(&v, desired)
		if budget == nil || *budget < 0 {
			t.Fatalf("Resolve(%q, %d) = %v", p, desired, budget)
		}
		// What clusters report and what the hub assigned are counts of pods: never negative.
		remaining1, active1, assigned1 = max(remaining1, 0), max(active1, 0), max(assigned1, 0)
		remaining2, active2 = max(remaining2, 0), max(active2, 0)
		clusters := []Cluster{
			{Name: "a", Remaining: remaining1, Active: active1, Assigned: ptr(assigned1)},
			{Name: "b", Remaining: remaining2, Active: active2},
		}
		if reported1 {
			clusters[0].Applied = ptr(assigned1)
		}
		shares := Divide(*budget, clusters)
		var grown int64
		for _, c := range clusters {
			s, ok := shares[c.Name]
			if !ok || s < 0 || s > max(c.Remaining, ptrValue(c.Assigned)) {
				t.Fatalf("Divide(%d, %+v) = %v: cluster %s gets %d", *budget, clusters, shares, c.Name, s)
			}
			if s > ptrValue(c.Assigned) {
				grown += int64(s - max(ptrValue(c.Assigned), c.Active))
			}
		}
		// Shares grow only out of the budget the clusters leave unused.
		if grown > int64(*budget) {
			t.Fatalf("Divide(%d, %+v) = %v grows shares by %d", *budget, clusters, shares, grown)
		}
	})
}

func ptrValue(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
