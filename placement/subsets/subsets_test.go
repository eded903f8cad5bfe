package subsets_test

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/musterhq/muster/placement/subsets"
)

func num(n int32) *intstr.IntOrString  { return ptr.To(intstr.FromInt32(n)) }
func pct(s string) *intstr.IntOrString { return ptr.To(intstr.FromString(s)) }

func TestRebalance(t *testing.T) {
	from := func(subs ...subsets.Subset) []subsets.Subset { return subs }
	tests := []struct {
		name    string
		total   int32
		subsets []subsets.Subset
		want    []int32
	}{
		{"first up to its max, the rest to the last", 5, from(subsets.Subset{Max: num(3)}, subsets.Subset{}), []int32{3, 2}},
		{"60% of 5 is 3", 5, from(subsets.Subset{Max: pct("60%")}, subsets.Subset{}), []int32{3, 2}},
		{"40% of 5 is 2", 5, from(subsets.Subset{Max: pct("40%")}, subsets.Subset{}), []int32{2, 3}},
		{"percents round up", 5, from(subsets.Subset{Max: pct("30%")}, subsets.Subset{}), []int32{2, 3}},
		{"fewer than the first max", 2, from(subsets.Subset{Max: num(3)}, subsets.Subset{}), []int32{2, 0}},
		{"zero replicas", 0, from(subsets.Subset{Max: num(3)}, subsets.Subset{}), []int32{0, 0}},
		{"three subsets", 10, from(subsets.Subset{Max: num(2)}, subsets.Subset{Max: num(3)}, subsets.Subset{}), []int32{2, 3, 5}},
		{"all bounded, the remainder goes to the last", 7, from(subsets.Subset{Max: num(2)}, subsets.Subset{Max: num(3)}), []int32{2, 5}},
		{"a max of zero", 3, from(subsets.Subset{Max: num(0)}, subsets.Subset{}), []int32{0, 3}},
		{"100% takes everything", 4, from(subsets.Subset{Max: pct("100%")}, subsets.Subset{}), []int32{4, 0}},
		{"no subsets", 4, nil, []int32{}},

		{"scale 5 to 2 empties the last subset first", 2,
			from(subsets.Subset{Max: num(3), Current: 3}, subsets.Subset{Current: 2}), []int32{2, 0}},
		{"scale 2 to 6 fills the first to its max first", 6,
			from(subsets.Subset{Max: num(3), Current: 2}, subsets.Subset{}), []int32{3, 3}},
		{"scale down takes the excess over a percent cap first", 4,
			from(subsets.Subset{Max: pct("40%"), Current: 4}, subsets.Subset{Current: 6}), []int32{2, 2}},
		{"a lowered cap moves the excess to the next subset", 5,
			from(subsets.Subset{Max: num(1), Current: 3}, subsets.Subset{Current: 2}), []int32{1, 4}},
		{"an unchanged total keeps a spread that fill order would not choose", 5,
			from(subsets.Subset{Max: num(3), Current: 1}, subsets.Subset{Current: 4}), []int32{1, 4}},

		{"an unschedulable subset keeps only what runs", 5,
			from(subsets.Subset{Max: num(3), Current: 3, Unschedulable: true, Keep: 1}, subsets.Subset{Current: 2}), []int32{1, 4}},
		{"an unschedulable subset with nothing running moves everything", 5,
			from(subsets.Subset{Max: num(3), Current: 3, Unschedulable: true}, subsets.Subset{Current: 2}), []int32{0, 5}},
		{"new replicas skip an unschedulable subset", 5,
			from(subsets.Subset{Max: num(3), Unschedulable: true}, subsets.Subset{}), []int32{0, 5}},
		{"skipped, the next bounded subset takes its max, then the skipped one", 5,
			from(subsets.Subset{Max: num(3), Unschedulable: true}, subsets.Subset{Max: num(4)}), []int32{1, 4}},
		{"moved replicas go to the next subset with room, not the last", 6,
			from(subsets.Subset{Max: num(2), Current: 2, Unschedulable: true}, subsets.Subset{Max: num(3), Current: 1}, subsets.Subset{Current: 3}), []int32{0, 3, 3}},
		{"schedulable again, a subset only takes new replicas", 5,
			from(subsets.Subset{Max: num(3)}, subsets.Subset{Current: 5}), []int32{0, 5}},
		{"schedulable again, it is first for a scale-up", 6,
			from(subsets.Subset{Max: num(3)}, subsets.Subset{Current: 5}), []int32{1, 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := subsets.Rebalance(tc.total, tc.subsets)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Rebalance(%d, %+v) = %v, want %v", tc.total, tc.subsets, got, tc.want)
			}
			var sum int32
			for _, n := range got {
				sum += n
			}
			if len(tc.subsets) > 0 && sum != tc.total {
				t.Errorf("Rebalance(%d) assigned %d replicas", tc.total, sum)
			}
		})
	}
}

func TestCap(t *testing.T) {
	for _, tc := range []struct {
		max   *intstr.IntOrString
		total int32
		want  int32
	}{
		{nil, 5, -1},
		{num(3), 5, 3},
		{pct("40%"), 5, 2},
		{pct("41%"), 5, 3},
		{pct("0%"), 5, 0},
		{pct("abc"), 5, 0},
	} {
		if got := subsets.Cap(tc.max, tc.total); got != tc.want {
			t.Errorf("Cap(%v, %d) = %d, want %d", tc.max, tc.total, got, tc.want)
		}
	}
}

// BenchmarkRebalance scales a 10,000-replica workload over 16 subsets (the API's maximum)
// by one replica each round, the common case of a controller following a scale change.
func BenchmarkRebalance(b *testing.B) {
	subs := make([]subsets.Subset, 16)
	for i := range subs[:15] {
		subs[i].Max = num(500)
	}
	total := int32(10000)
	current := subsets.Rebalance(total, subs)
	for b.Loop() {
		for i := range subs {
			subs[i].Current = current[i]
		}
		total ^= 1 // 10000 ↔ 10001
		current = subsets.Rebalance(total, subs)
	}
}
