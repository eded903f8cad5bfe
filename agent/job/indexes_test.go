package job

import (
	"math"
	"slices"
	"testing"
)

// members lists the set's indexes; only for small sets in tests.
func (s indexSet) members() []int {
	var out []int
	for _, r := range s.runs {
		for i := r.first; i <= r.last; i++ {
			out = append(out, i)
		}
	}
	return out
}

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
		{"5,1-2,3", 10, []int{1, 2, 3, 5}, "1-3,5"},
		{"1-4,2-6", 10, []int{1, 2, 3, 4, 5, 6}, "1-6"},
		{"-1,4-2,7-", 10, nil, ""},
		{"12", 10, nil, ""},
	}
	for _, tc := range cases {
		got := parseIndexes(tc.in, tc.completions)
		if !slices.Equal(got.members(), tc.want) {
			t.Errorf("parseIndexes(%q) = %v, want %v", tc.in, got.members(), tc.want)
		}
		if got.String() != tc.out {
			t.Errorf("String of %q = %q, want %q", tc.in, got.String(), tc.out)
		}
		if got.count() != len(tc.want) {
			t.Errorf("count of %q = %d, want %d", tc.in, got.count(), len(tc.want))
		}
	}
}

func TestIndexSetAdd(t *testing.T) {
	cases := []struct {
		start string
		add   []int
		want  string
	}{
		{"", []int{3}, "3"},
		{"3", []int{3}, "3"},
		{"3", []int{4}, "3,4"},
		{"3", []int{2}, "2,3"},
		{"1,3", []int{2}, "1-3"},
		{"1-3,7-9", []int{5}, "1-3,5,7-9"},
		{"1-3,5-9", []int{4}, "1-9"},
		{"", []int{5, 3, 4, 0, 1, 2}, "0-5"},
	}
	for _, tc := range cases {
		s := parseIndexes(tc.start, 100)
		for _, i := range tc.add {
			s.add(i)
		}
		if s.String() != tc.want {
			t.Errorf("%q + %v = %q, want %q", tc.start, tc.add, s.String(), tc.want)
		}
	}
}

func TestIndexSetQueries(t *testing.T) {
	s := parseIndexes("2-4,8,10-2147483646", math.MaxInt32)
	for i, want := range map[int]bool{0: false, 2: true, 4: true, 5: false, 8: true, 9: false, 10: true, 2147483646: true} {
		if s.has(i) != want {
			t.Errorf("has(%d) = %v, want %v", i, !want, want)
		}
	}
	for i, want := range map[int]int{0: 0, 2: 5, 3: 5, 8: 9, 10: 2147483647} {
		if got := s.nextAbsent(i); got != want {
			t.Errorf("nextAbsent(%d) = %d, want %d", i, got, want)
		}
	}
	if got, want := s.count(), 3+1+2147483637; got != want {
		t.Errorf("count = %d, want %d", got, want)
	}
	if got := s.overlap(parseIndexes("0-3,8-12", math.MaxInt32)); got != 2+1+3 {
		t.Errorf("overlap = %d, want 6", got)
	}
	if got := len(s.runs); got != 3 {
		t.Errorf("the set keeps %d runs for 2^31 indexes, want 3", got)
	}
}
