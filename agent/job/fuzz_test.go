package job

import (
	"math"
	"testing"
	"time"
)

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
		allocs := testing.AllocsPerRun(1, func() { create = decideRound(job, pods, backoffRecord{}, fence{}, now).create })
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
