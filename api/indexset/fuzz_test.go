package indexset

import "testing"

// FuzzIndexes checks the index set against a plain map on what status strings and
// success policies can hold: no panic, the written form reads back the same, and every
// query agrees with the model.
func FuzzIndexes(f *testing.F) {
	for _, seed := range []string{"", "0", "1,3-5,7", "2-4,8-12", "5,1-2,3", "-1,4-2,7-", "0-2147483646", "x,,3-", "9999999999999999999"} {
		f.Add(seed, 20, 7)
	}
	f.Fuzz(func(t *testing.T, in string, completions, probe int) {
		completions = min(max(completions, 0), 300)
		s := Parse(in, completions)
		if again := Parse(s.String(), completions); again.String() != s.String() {
			t.Fatalf("%q reads back as %q, then %q", in, s.String(), again.String())
		}
		model := map[int]bool{}
		for i, r := range s.runs {
			if r.first > r.last || r.first < 0 || r.last >= completions || (i > 0 && r.first <= s.runs[i-1].last+1) {
				t.Fatalf("runs of %q are not sorted, disjoint and apart: %v", in, s.runs)
			}
			for j := r.first; j <= r.last; j++ {
				model[j] = true
			}
		}
		probe = min(max(probe, 0), completions)
		s.Add(probe)
		model[probe] = true
		if s.Len() != len(model) {
			t.Fatalf("count %d, model %d", s.Len(), len(model))
		}
		for i := range completions + 1 {
			if s.Has(i) != model[i] {
				t.Fatalf("has(%d) = %v, model %v", i, s.Has(i), model[i])
			}
		}
		next := probe
		for model[next] {
			next++
		}
		if got := s.NextAbsent(probe); got != next {
			t.Fatalf("nextAbsent(%d) = %d, want %d", probe, got, next)
		}
	})
}
