package division

import "testing"

// FuzzSplit: any total and weights split without panic into non-negative parts that add
// up to the total whenever some weight is positive, and Ranges lays them end to end.
func FuzzSplit(f *testing.F) {
	f.Add(int32(20), int32(1), int32(1), int32(0))
	f.Add(int32(2147483647), int32(1000), int32(1), int32(999))
	f.Add(int32(-5), int32(1), int32(2), int32(3))
	f.Add(int32(7), int32(-1), int32(0), int32(0))
	f.Fuzz(func(t *testing.T, total, w1, w2, w3 int32) {
		weights := []int32{w1, w2, w3}
		parts := Split(total, weights)
		var sum int64
		positive := false
		for i, p := range parts {
			if p < 0 || (weights[i] <= 0 && p != 0) {
				t.Fatalf("Split(%d, %v) = %v: part %d is %d", total, weights, parts, i, p)
			}
			sum += int64(p)
			positive = positive || weights[i] > 0
		}
		if total > 0 && positive && sum != int64(total) {
			t.Fatalf("Split(%d, %v) = %v adds up to %d", total, weights, parts, sum)
		}
		ranges := Ranges(parts)
		for i, r := range ranges {
			if r.End-r.Start != parts[i] || (i > 0 && r.Start != ranges[i-1].End) {
				t.Fatalf("Ranges(%v) = %v", parts, ranges)
			}
		}
	})
}
