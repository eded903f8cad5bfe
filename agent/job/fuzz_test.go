package job

import (
	"math"
	"testing"
	"time"
)

// FuzzIndexes checks the index set against a plain map on what status strings and
// success policies can hold: no panic, the written form reads back the same, and every
// query agrees with the model.
func FuzzIndexes(f *testing.F) {
	for _, seed := range []string{"", "0", "1,3-5,7", "2-4,8-12", "5,1-2,3", "-1,4-2,7-", "0-2147483646", "x,,3-", "9999999999999999999"} {
		f.Add(seed, 20, 7)
	}
	f.Fuzz(func(t *testing.T, in string, completions, probe int) {
		completions = min(max(completions, 0), 300)
		s := parseIndexes(in, completions)
		if again := parseIndexes(s.String(), completions); again.String() != s.String() {
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
		s.add(probe)
		model[probe] = true
		if s.count() != len(model) {
			t.Fatalf("count %d, model %d", s.count(), len(model))
		}
		for i := range completions + 1 {
			if s.has(i) != model[i] {
				t.Fatalf("has(%d) = %v, model %v", i, s.has(i), model[i])
			}
		}
		next := probe
		for model[next] {
			next++
		}
		if got := s.nextAbsent(probe); got != next {
			t.Fatalf("nextAbsent(%d) = %d, want %d", probe, got, next)
		}
	})
}

// FuzzIndexedRound runs one decision round of an Indexed job at any completions,
// parallelism and progress: no panic, never more pods than parallelism allows, and a
// bounded number of allocations however large the numbers.
func FuzzIndexedRound(f *testing.F) {
	f.Add(int32(10), int32(2), 0)
	f.Add(int32(math.MaxInt32), int32(100), 5000)
	f.Add(int32(100_000), int32(100_000), 0)
	f.Add(int32(1), int32(0), 3)
	f.Fuzz(func(t *testing.T, completions, parallelism int32, done int) {
		completions = max(completions, 1)
		parallelism = min(max(parallelism, 0), 2000)
		done = min(max(done, 0), int(completions)-1)
		job, pods := indexedRound(completions, parallelism, done)
		now := time.Now()
		var create []int
		allocs := testing.AllocsPerRun(1, func() { create = decideRound(job, pods, backoffRecord{}, now).create })
		if len(create) > int(parallelism) || len(create) > maxPodWritesPerRound {
			t.Fatalf("creates %d pods at parallelism %d", len(create), parallelism)
		}
		// Allocations are counted process-wide, and when the seeds run as tests the suite's
		// controllers run beside them: the bound leaves room for those.
		if limit := 40*float64(parallelism) + 10_000; allocs > limit {
			t.Fatalf("one round made %.0f allocations at parallelism %d, want at most %.0f", allocs, parallelism, limit)
		}
	})
}
