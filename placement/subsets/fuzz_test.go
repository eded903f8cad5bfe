package subsets

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// FuzzRebalance: whatever the caps (numbers or percents, even malformed ones), the current
// replicas and the total, every subset gets a non-negative count, all but the last stay
// within their caps, and the counts add up to the total.
func FuzzRebalance(f *testing.F) {
	f.Add(int32(5), "3", int32(0), false, "", int32(0))
	f.Add(int32(2147483647), "50%", int32(2147483647), true, "100%", int32(5))
	f.Add(int32(-3), "x%", int32(-1), false, "-4", int32(9))
	f.Fuzz(func(t *testing.T, total int32, max1 string, cur1 int32, unsched1 bool, max2 string, cur2 int32) {
		// Subsets hold replicas of one workload, so their sum never passed the int32 total.
		if int64(max(cur1, 0))+int64(max(cur2, 0)) > 1<<31-1 {
			return
		}
		parse := func(s string) *intstr.IntOrString {
			if s == "" {
				return nil
			}
			v := intstr.Parse(s)
			return &v
		}
		subs := []Subset{
			{Max: parse(max1), Current: cur1, Unschedulable: unsched1, Keep: cur1 / 2},
			{Max: parse(max2), Current: cur2},
		}
		got := Rebalance(total, subs)
		var sum int64
		for i, n := range got {
			if n < 0 {
				t.Fatalf("Rebalance(%d, %+v) = %v: negative", total, subs, got)
			}
			if c := Cap(subs[i].Max, max(total, 0)); i < len(got)-1 && c >= 0 && n > c {
				t.Fatalf("Rebalance(%d, %+v) = %v: subset %d over its cap %d", total, subs, got, i, c)
			}
			sum += int64(n)
		}
		if sum != int64(max(total, 0)) {
			t.Fatalf("Rebalance(%d, %+v) = %v adds up to %d", total, subs, got, sum)
		}
	})
}
