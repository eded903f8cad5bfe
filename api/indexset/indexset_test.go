package indexset

import (
	"math"
	"slices"
	"testing"
)

// members lists the set's indexes; only for small sets in tests.
func (s Set) members() []int {
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
		got := Parse(tc.in, tc.completions)
		if !slices.Equal(got.members(), tc.want) {
			t.Errorf("Parse(%q) = %v, want %v", tc.in, got.members(), tc.want)
		}
		if got.String() != tc.out {
			t.Errorf("String of %q = %q, want %q", tc.in, got.String(), tc.out)
		}
		if got.Len() != len(tc.want) {
			t.Errorf("count of %q = %d, want %d", tc.in, got.Len(), len(tc.want))
		}
	}
}

func TestAdd(t *testing.T) {
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
		s := Parse(tc.start, 100)
		for _, i := range tc.add {
			s.Add(i)
		}
		if s.String() != tc.want {
			t.Errorf("%q + %v = %q, want %q", tc.start, tc.add, s.String(), tc.want)
		}
	}
}

func TestQueries(t *testing.T) {
	s := Parse("2-4,8,10-2147483646", math.MaxInt32)
	for i, want := range map[int]bool{0: false, 2: true, 4: true, 5: false, 8: true, 9: false, 10: true, 2147483646: true} {
		if s.Has(i) != want {
			t.Errorf("has(%d) = %v, want %v", i, !want, want)
		}
	}
	for i, want := range map[int]int{0: 0, 2: 5, 3: 5, 8: 9, 10: 2147483647} {
		if got := s.NextAbsent(i); got != want {
			t.Errorf("nextAbsent(%d) = %d, want %d", i, got, want)
		}
	}
	if got, want := s.Len(), 3+1+2147483637; got != want {
		t.Errorf("count = %d, want %d", got, want)
	}
	if got := s.Overlap(Parse("0-3,8-12", math.MaxInt32)); got != 2+1+3 {
		t.Errorf("overlap = %d, want 6", got)
	}
	if got := len(s.runs); got != 3 {
		t.Errorf("the set keeps %d runs for 2^31 indexes, want 3", got)
	}
}

func TestSetAlgebra(t *testing.T) {
	cases := []struct {
		name, s, o   string
		union, minus string
	}{
		{name: "disjoint", s: "0-3", o: "5-7", union: "0-3,5-7", minus: "0-3"},
		{name: "touching runs join", s: "0-3", o: "4-7", union: "0-7", minus: "0-3"},
		{name: "holes punched", s: "0-9", o: "2,5-6", union: "0-9", minus: "0,1,3,4,7-9"},
		{name: "a run covering several", s: "1,3,5-8,12", o: "0-6", union: "0-8,12", minus: "7,8,12"},
		{name: "nothing left", s: "2-4", o: "0-9", union: "0-9", minus: ""},
		{name: "empty", s: "", o: "1", union: "1", minus: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, o := Parse(tc.s, math.MaxInt32), Parse(tc.o, math.MaxInt32)
			if got := s.Union(o).String(); got != tc.union {
				t.Errorf("union = %q, want %q", got, tc.union)
			}
			if got := s.Minus(o).String(); got != tc.minus {
				t.Errorf("minus = %q, want %q", got, tc.minus)
			}
		})
	}
}

func TestPositions(t *testing.T) {
	s := Parse("3,5-7,10,20-2147483646", math.MaxInt32)
	for i, want := range map[int]int{0: 3, 1: 5, 3: 7, 4: 10, 5: 20, 6: 21} {
		if got, ok := s.Nth(i); !ok || got != want {
			t.Errorf("Nth(%d) = %d, %v; want %d", i, got, ok, want)
		}
	}
	if _, ok := Parse("1-3", 10).Nth(3); ok {
		t.Error("Nth past the end found a member")
	}
	for _, tc := range []struct {
		from, to int
		want     string
	}{{0, 1, "3"}, {1, 3, "5,6"}, {2, 6, "6,7,10,20"}, {0, 0, ""}, {5, 7, "20,21"}} {
		if got := s.Slice(tc.from, tc.to).String(); got != tc.want {
			t.Errorf("Slice(%d, %d) = %q, want %q", tc.from, tc.to, got, tc.want)
		}
	}
	if got := s.Select(Parse("0,2-4,6", 100)).String(); got != "3,6,7,10,21" {
		t.Errorf("Select = %q, want 3,6,7,10,21", got)
	}
	if got := Range(4, 8).String(); got != "4-7" {
		t.Errorf("Range(4, 8) = %q", got)
	}
}
