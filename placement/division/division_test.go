package division

import (
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	cases := []struct {
		name    string
		total   int32
		weights []int32
		want    []int32
	}{
		{"even", 20, []int32{1, 1}, []int32{10, 10}},
		{"uneven with remainder", 10, []int32{1, 2}, []int32{3, 7}},
		{"tie goes to the first", 5, []int32{1, 1}, []int32{3, 2}},
		{"zero weight gets nothing", 6, []int32{0, 3, 3}, []int32{0, 3, 3}},
		{"all zero", 6, []int32{0, 0}, []int32{0, 0}},
		{"more parts than total", 2, []int32{1, 1, 1}, []int32{1, 1, 0}},
		{"nothing to split", 0, []int32{1, 1}, []int32{0, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Split(tc.total, tc.weights)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Split(%d, %v) = %v, want %v", tc.total, tc.weights, got, tc.want)
			}
			var sum int32
			for _, v := range got {
				sum += v
			}
			if tc.total > 0 && slices.ContainsFunc(tc.weights, func(w int32) bool { return w > 0 }) && sum != tc.total {
				t.Errorf("parts sum to %d, want %d", sum, tc.total)
			}
		})
	}
}

func TestRanges(t *testing.T) {
	got := Ranges([]int32{3, 0, 7})
	want := []Range{{0, 3}, {3, 3}, {3, 10}}
	if !slices.Equal(got, want) {
		t.Errorf("Ranges = %v, want %v", got, want)
	}
}

func TestFitWeights(t *testing.T) {
	for _, tc := range []struct {
		name string
		fit  map[string]int
		want []int32
	}{
		{"by the nodes that fit", map[string]int{"a": 2, "c": 5}, []int32{2, 0, 5}},
		{"evenly when none is known to fit", nil, []int32{1, 1, 1}},
		{"evenly when every count is zero", map[string]int{"a": 0}, []int32{1, 1, 1}},
		{"clusters outside the list are ignored", map[string]int{"x": 4, "b": 1}, []int32{0, 1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FitWeights([]string{"a", "b", "c"}, tc.fit); !slices.Equal(got, tc.want) {
				t.Errorf("FitWeights = %v, want %v", got, tc.want)
			}
		})
	}
}
