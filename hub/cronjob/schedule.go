package cronjob

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// tooManyMissed is the number of missed slots above which the controller reports an event,
// as the built-in CronJob controller does.
const tooManyMissed = 100

// InvalidError says which field of a FleetCronJob, schedule or timeZone, does not parse.
type InvalidError struct {
	Field string
	Err   error
}

func (e *InvalidError) Error() string { return e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }

func invalid(field string, err error) error { return &InvalidError{Field: field, Err: err} }

// Parse reads a standard five-field schedule or a descriptor (@yearly, @monthly, @weekly,
// @daily, @midnight, @hourly) in the IANA time zone tz (UTC when empty).
//
// @every is refused: it is a delay from whenever the controller last looked, not a time on
// the clock, so it cannot give the deterministic slot names that make a double fire
// impossible across hub failover. TZ= and CRON_TZ= are refused for spec.timeZone.
func Parse(spec string, tz string) (cron.Schedule, error) {
	s := strings.TrimSpace(spec)
	switch {
	case strings.HasPrefix(s, "TZ=") || strings.HasPrefix(s, "CRON_TZ="):
		return nil, invalid("schedule", errors.New("the schedule must not set a time zone (TZ= or CRON_TZ=): use spec.timeZone"))
	case strings.HasPrefix(s, "@every"):
		return nil, invalid("schedule", errors.New("@every is not supported: use a five-field schedule such as */5 * * * *"))
	}
	loc := time.UTC
	if tz != "" {
		var err error
		if loc, err = time.LoadLocation(tz); err != nil {
			return nil, invalid("timeZone", fmt.Errorf("unknown time zone %q: %w", tz, err))
		}
	}
	sched, err := cron.ParseStandard(s)
	if err != nil {
		return nil, invalid("schedule", fmt.Errorf("invalid schedule %q: %w", spec, err))
	}
	spec2, ok := sched.(*cron.SpecSchedule)
	if !ok {
		return nil, invalid("schedule", fmt.Errorf("schedule %q is not a calendar schedule", spec))
	}
	spec2.Location = loc
	return spec2, nil
}

// mostRecent returns the latest slot in (earliest, now], or nil, and how many slots fell in
// that window, counting no further than tooManyMissed+1.
func mostRecent(sched cron.Schedule, earliest, now time.Time) (*time.Time, int) {
	var last *time.Time
	missed := 0
	for t := sched.Next(earliest); !t.After(now); t = sched.Next(t) {
		tt := t
		last = &tt
		if missed++; missed > tooManyMissed {
			// Only the latest slot matters now: find it from the smallest window before
			// now that holds one, instead of walking every slot since earliest.
			return latestBefore(sched, earliest, now), missed
		}
	}
	return last, missed
}

func latestBefore(sched cron.Schedule, earliest, now time.Time) *time.Time {
	for _, w := range []time.Duration{time.Minute, time.Hour, 24 * time.Hour, 32 * 24 * time.Hour, 367 * 24 * time.Hour} {
		from := now.Add(-w)
		if from.Before(earliest) {
			from = earliest
		}
		if sched.Next(from).After(now) {
			continue
		}
		var last time.Time
		for t := sched.Next(from); !t.After(now); t = sched.Next(t) {
			last = t
		}
		return &last
	}
	var last time.Time
	for t := sched.Next(earliest); !t.After(now); t = sched.Next(t) {
		last = t
	}
	return &last
}

// earliestConsidered is where the search for missed slots starts: the last slot run (or
// the object's creation), but no earlier than startingDeadlineSeconds before now.
func earliestConsidered(lastSchedule *time.Time, created time.Time, startingDeadline *int64, now time.Time) time.Time {
	earliest := created
	if lastSchedule != nil {
		earliest = *lastSchedule
	}
	if startingDeadline != nil {
		if limit := now.Add(-time.Duration(*startingDeadline) * time.Second); earliest.Before(limit) {
			earliest = limit
		}
	}
	return earliest
}
