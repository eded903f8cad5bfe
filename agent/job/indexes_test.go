package job

import (
	"slices"
	"testing"
)

func TestIndexesRoundTrip(t *testing.T) {
	cases := []struct {
		in          string
		completions int
		want        []int
		out         string
	}{
		{"", 10, nil, ""},
		{"0", 10, []int{0}, "0"},
		{"1,3-5,7", 10, []int{1, 3, 4, 5, 7}, "1,3-5,7"},
		{"0,1", 10, []int{0, 1}, "0,1"},
		{"0-2", 10, []int{0, 1, 2}, "0-2"},
		{"2-4,8-12", 10, []int{2, 3, 4, 8, 9}, "2-4,8,9"},
		{"x,3", 10, []int{3}, "3"},
	}
	for _, tc := range cases {
		got := parseIndexes(tc.in, tc.completions)
		if !slices.Equal(got.sorted(), tc.want) && !(len(got) == 0 && tc.want == nil) {
			t.Errorf("parseIndexes(%q) = %v, want %v", tc.in, got.sorted(), tc.want)
		}
		if got.String() != tc.out {
			t.Errorf("String of %q = %q, want %q", tc.in, got.String(), tc.out)
		}
	}
}
