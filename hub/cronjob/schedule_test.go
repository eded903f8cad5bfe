package cronjob

import (
	"strings"
	"testing"
	"time"
)

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
	}
	for _, tc := range cases {
		_, err := Parse(tc.spec, tc.tz)
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
		{"more than 100 missed", "* * * * *", "", "2026-11-20T12:00:00Z", "2026-11-22T12:00:30Z", "2026-11-22T12:00:00Z", tooManyMissed + 1},
		{"time zone", "0 9 * * *", "Europe/Berlin", "2026-11-22T00:00:00Z", "2026-11-22T09:00:00Z", "2026-11-22T08:00:00Z", 1},
		// 2026-03-29 02:30 does not exist in Berlin (02:00 → 03:00): the slot is skipped.
		{"DST spring forward skips the missing hour", "30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", "2026-03-29T12:00:00Z", "", 0},
		// 2026-10-25 02:30 happens twice in Berlin (03:00 → 02:00): robfig/cron, and so the
		// built-in CronJob controller, sees two slots, 00:30Z and 01:30Z.
		{"DST fall back repeats the hour as upstream", "30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", "2026-10-25T12:00:00Z", "2026-10-25T01:30:00Z", 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, missed := mostRecent(mustParse(t, tc.spec, tc.tz), at(tc.earliest), at(tc.now))
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
	if got := earliestConsidered(nil, created, nil, now); !got.Equal(created) {
		t.Errorf("never scheduled: %v, want the creation time", got)
	}
	if got := earliestConsidered(&last, created, nil, now); !got.Equal(last) {
		t.Errorf("scheduled before: %v, want the last schedule", got)
	}
	if got := earliestConsidered(&last, created, &deadline, now); !got.Equal(now.Add(-5 * time.Minute)) {
		t.Errorf("with startingDeadlineSeconds 300: %v, want now-5m", got)
	}
}
