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

func TestAssign(t *testing.T) {
	tests := []struct {
		name       string
		total      int32
		subsets    []subsets.Subset
		want       []int32
		unassigned int32
	}{
		{"first up to its max, the rest to the last", 5, []subsets.Subset{{Max: num(3)}, {}}, []int32{3, 2}, 0},
		{"60% of 5 is 3", 5, []subsets.Subset{{Max: pct("60%")}, {}}, []int32{3, 2}, 0},
		{"40% of 5 is 2", 5, []subsets.Subset{{Max: pct("40%")}, {}}, []int32{2, 3}, 0},
		{"percents round up", 5, []subsets.Subset{{Max: pct("30%")}, {}}, []int32{2, 3}, 0},
		{"fewer than the first max", 2, []subsets.Subset{{Max: num(3)}, {}}, []int32{2, 0}, 0},
		{"scaling up fills the first to its max", 6, []subsets.Subset{{Max: num(3)}, {}}, []int32{3, 3}, 0},
		{"zero replicas", 0, []subsets.Subset{{Max: num(3)}, {}}, []int32{0, 0}, 0},
		{"three subsets", 10, []subsets.Subset{{Max: num(2)}, {Max: num(3)}, {}}, []int32{2, 3, 5}, 0},
		{"all bounded, too many", 7, []subsets.Subset{{Max: num(2)}, {Max: num(3)}}, []int32{2, 3}, 2},
		{"an unschedulable subset is skipped", 5, []subsets.Subset{{Max: num(3), Unschedulable: true}, {}}, []int32{0, 5}, 0},
		{"skipped, the next bounded subset takes its max", 5,
			[]subsets.Subset{{Max: num(3), Unschedulable: true}, {Max: num(4)}}, []int32{1, 4}, 0},
		{"a max of zero", 3, []subsets.Subset{{Max: num(0)}, {}}, []int32{0, 3}, 0},
		{"100% takes everything", 4, []subsets.Subset{{Max: pct("100%")}, {}}, []int32{4, 0}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, left := subsets.Assign(tc.total, tc.subsets)
			if !slices.Equal(got, tc.want) || left != tc.unassigned {
				t.Errorf("Assign(%d) = %v, %d unassigned; want %v, %d", tc.total, got, left, tc.want, tc.unassigned)
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
