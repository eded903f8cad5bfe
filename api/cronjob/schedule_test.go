package cronjob

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
)

// within runs f and fails the test if it has not returned after two seconds, so that a
// slot search that loops forever fails instead of hanging the suite.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatalf("%s did not return within 2s", what)
	}
}

func TestParse(t *testing.T) {
	cases := []struct {
		spec, tz, wantErr string
	}{
		{"*/5 * * * *", "", ""},
		{"0 9 * * 1-5", "Europe/Berlin", ""},
		{"@hourly", "", ""},
		{"@daily", "America/New_York", ""},
		{"@every 5m", "", "@every is not supported"},
		{"TZ=UTC * * * * *", "", "must not set a time zone"},
		{"CRON_TZ=Europe/Paris 0 * * * *", "", "must not set a time zone"},
		{"* * * *", "", "invalid schedule"},
		{"61 * * * *", "", "invalid schedule"},
		{"* * * * *", "Mars/Olympus", "unknown time zone"},
		// Schedules that parse but name no real day: robfig's Next says zero for them.
		{"0 0 30 2 *", "", `schedule "0 0 30 2 *" never fires: no time matches it`},
		{"59 23 31 2 *", "", "never fires"},
		{"0 0 31 4,6,9,11 *", "", "never fires"},
		{"0 0 30,31 2 *", "Europe/Berlin", "never fires"},
		// February 29th fires every leap year; the 31st of some months fires every year.
		{"0 0 29 2 *", "", ""},
		{"0 0 29 2 *", "Pacific/Kiritimati", ""},
		{"0 0 31 4,5 *", "", ""},
		// The day of month and day of week are ORed, as upstream: Mondays in February.
		{"0 0 30 2 1", "", ""},
		{"* * * * *", "Local", `time zone "Local" is not allowed`},
		{"* * * * *", "local", "is not allowed"},
		{"* * * * *", "LOCAL", "is not allowed"},
		{"* * * * *", " UTC", "leading or trailing spaces"},
		{"* * * * *", "../../etc/localtime", "unknown time zone"},
	}
	for _, tc := range cases {
		var err error
		within(t, fmt.Sprintf("Parse(%q, %q)", tc.spec, tc.tz), func() { _, err = Parse(tc.spec, tc.tz) })
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("Parse(%q, %q): %v", tc.spec, tc.tz, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("Parse(%q, %q) = %v, want an error containing %q", tc.spec, tc.tz, err, tc.wantErr)
		}
	}
}

func mustParse(t *testing.T, spec, tz string) interface{ Next(time.Time) time.Time } {
	t.Helper()
	s, err := Parse(spec, tz)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMostRecent(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		name          string
		spec, tz      string
		earliest, now string
		want          string // "" for none
		missed        int
	}{
		{"nothing due yet", "*/5 * * * *", "", "2026-11-22T12:00:00Z", "2026-11-22T12:04:59Z", "", 0},
		{"one slot due", "*/5 * * * *", "", "2026-11-22T12:00:00Z", "2026-11-22T12:05:30Z", "2026-11-22T12:05:00Z", 1},
		{"the slot at now counts", "*/5 * * * *", "", "2026-11-22T12:00:00Z", "2026-11-22T12:05:00Z", "2026-11-22T12:05:00Z", 1},
		{"three missed, the latest runs", "*/5 * * * *", "", "2026-11-22T12:00:00Z", "2026-11-22T12:17:00Z", "2026-11-22T12:15:00Z", 3},
		{"more than 100 missed", "* * * * *", "", "2026-11-20T12:00:00Z", "2026-11-22T12:00:30Z", "2026-11-22T12:00:00Z", TooManyMissed + 1},
		{"time zone", "0 9 * * *", "Europe/Berlin", "2026-11-22T00:00:00Z", "2026-11-22T09:00:00Z", "2026-11-22T08:00:00Z", 1},
		// 2026-03-29 02:30 does not exist in Berlin (02:00 → 03:00): the slot is skipped.
		{"DST spring forward skips the missing hour", "30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", "2026-03-29T12:00:00Z", "", 0},
		// 2026-10-25 02:30 happens twice in Berlin (03:00 → 02:00): robfig/cron, and so the
		// built-in CronJob controller, sees two slots, 00:30Z and 01:30Z.
		{"DST fall back repeats the hour as upstream", "30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", "2026-10-25T12:00:00Z", "2026-10-25T01:30:00Z", 2},
		// Far-back windows cost a bisection, not a walk over every slot since earliest.
		{"fifty years of minutes", "* * * * *", "", "1976-01-01T00:00:00Z", "2026-11-22T12:00:30Z", "2026-11-22T12:00:00Z", TooManyMissed + 1},
		{"the latest slot is months back", "* * * 1 *", "", "1990-01-01T00:00:00Z", "2026-11-22T12:00:00Z", "2026-01-31T23:59:00Z", TooManyMissed + 1},
		{"the latest slot is now", "*/2 * * * *", "", "2000-01-01T00:00:00Z", "2026-11-22T12:02:00Z", "2026-11-22T12:02:00Z", TooManyMissed + 1},
		{"leap days over a century", "* * 29 2 *", "", "1926-01-01T00:00:00Z", "2026-11-22T12:00:00Z", "2024-02-29T23:59:00Z", TooManyMissed + 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got *time.Time
			var missed int
			within(t, "mostRecent", func() { got, missed = mostRecent(mustParse(t, tc.spec, tc.tz), at(tc.earliest), at(tc.now)) })
			switch {
			case tc.want == "" && got != nil:
				t.Errorf("mostRecent = %v, want none", got)
			case tc.want != "" && (got == nil || !got.Equal(at(tc.want))):
				t.Errorf("mostRecent = %v, want %s", got, tc.want)
			}
			if missed != tc.missed {
				t.Errorf("missed = %d, want %d", missed, tc.missed)
			}
		})
	}
}

func TestEarliestConsidered(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	created := now.Add(-time.Hour)
	last := now.Add(-10 * time.Minute)
	deadline := int64(300)
	if got := EarliestConsidered(nil, created, nil, now); !got.Equal(created) {
		t.Errorf("never scheduled: %v, want the creation time", got)
	}
	if got := EarliestConsidered(&last, created, nil, now); !got.Equal(last) {
		t.Errorf("scheduled before: %v, want the last schedule", got)
	}
	if got := EarliestConsidered(&last, created, &deadline, now); !got.Equal(now.Add(-5 * time.Minute)) {
		t.Errorf("with startingDeadlineSeconds 300: %v, want now-5m", got)
	}
	huge := int64(math.MaxInt64)
	if got := EarliestConsidered(&last, created, &huge, now); !got.Equal(last) {
		t.Errorf("with the largest startingDeadlineSeconds: %v, want the last schedule (a deadline that long limits nothing)", got)
	}
}

// neverFires builds schedules the way an object admitted without the webhook reaches the
// controller: parsed, but never checked for a slot.
func neverFires(t *testing.T, spec string) cron.Schedule {
	t.Helper()
	s, err := cron.ParseStandard(spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPlanStopsOnAScheduleThatNeverFires(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, spec := range []string{"0 0 30 2 *", "59 23 31 2 *", "0 0 31 4,6,9,11 *"} {
		for _, earliest := range []time.Time{now.Add(-time.Minute), now.AddDate(-30, 0, 0), {}} {
			var got Slots
			var err error
			within(t, fmt.Sprintf("Plan(%q) from %s", spec, earliest), func() { got, err = Plan(neverFires(t, spec), earliest, now) })
			if !errors.Is(err, ErrNoNextSlot) || got.Due != nil || got.Missed != 0 || !got.Next.IsZero() {
				t.Errorf("Plan(%q) from %s = %+v, %v; want nothing due and ErrNoNextSlot", spec, earliest, got, err)
			}
		}
	}
}

func TestPlanFindsTheDueAndNextSlots(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 7, 0, 0, time.UTC)
	got, err := Plan(mustParse(t, "*/5 * * * *", ""), now.Add(-10*time.Minute), now)
	if err != nil {
		t.Fatal(err)
	}
	if want := now.Add(-2 * time.Minute); got.Due == nil || !got.Due.Equal(want) || got.Missed != 2 || !got.Next.Equal(now.Add(3*time.Minute)) {
		t.Errorf("plan = due %v missed %d next %v; want due %v, 2 missed, next %v", got.Due, got.Missed, got.Next, want, now.Add(3*time.Minute))
	}
}
