package cronjob

import (
	"testing"
	"time"
)

// FuzzSchedule: any schedule and zone either is refused or gives slots, and the slot
// search over up to a century returns without hanging, its due slot inside the window
// and its next slot after now.
func FuzzSchedule(f *testing.F) {
	for _, spec := range []string{"*/1 * * * *", "0 0 30 2 *", "0 0 29 2 *", "@hourly", "@every 5m", "TZ=UTC * * * * *", "59 23 31 2 *", "0 0 31 4,6,9,11 *", "* * * * * *", ""} {
		f.Add(spec, "", int64(3600), int64(60))
	}
	f.Add("30 2 * * *", "America/New_York", int64(100*365*24*3600), int64(0))
	f.Add("0 0 * * 1", "Local", int64(-5), int64(-1))
	f.Fuzz(func(t *testing.T, spec, tz string, back, deadline int64) {
		start := time.Now()
		sched, err := Parse(spec, tz)
		if took := time.Since(start); took > 2*time.Second {
			t.Fatalf("Parse(%q, %q) took %v", spec, tz, took)
		}
		if err != nil {
			return
		}
		now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
		created := now.Add(-time.Duration(min(max(back, 0), 100*365*24*3600)) * time.Second)
		var deadlinePtr *int64
		if deadline >= 0 {
			deadlinePtr = &deadline
		}
		earliest := EarliestConsidered(nil, created, deadlinePtr, now)
		done := make(chan struct{})
		var got Slots
		go func() {
			defer close(done)
			got, err = Plan(sched, earliest, now)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("Plan(%q, %q) from %v did not return in 5s", spec, tz, earliest)
		}
		if got.Due != nil && (got.Due.After(now) || !got.Due.After(earliest)) {
			t.Fatalf("Plan(%q) due %v outside (%v, %v]", spec, got.Due, earliest, now)
		}
		if err == nil && !got.Next.After(now) {
			t.Fatalf("Plan(%q) next %v not after %v", spec, got.Next, now)
		}
	})
}
