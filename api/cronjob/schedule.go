// Package cronjob holds what a FleetCronJob's schedule means beyond its Go type, for the
// hub's controller, its admission webhook and musterctl alike: how a schedule and time zone
// parse (and which are refused), which slot is due and which comes next, and the names a
// slot's run gets.
package cronjob

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// TooManyMissed is the number of missed slots above which the controller reports an event,
// as the built-in CronJob controller does.
const TooManyMissed = 100

// InvalidError says which field of a FleetCronJob, schedule or timeZone, does not parse.
type InvalidError struct {
	Field string
	Err   error
}

func (e *InvalidError) Error() string { return e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }

func invalid(field string, err error) error { return &InvalidError{Field: field, Err: err} }

// neverFiresFrom is where Parse looks for a schedule's first slot. Calendar schedules
// repeat every year, except those that name only February 29th, which repeat every leap
// year: starting in a leap year's January, robfig's five-year search finds either kind.
// A fixed start makes admission give the same answer whatever day it is.
var neverFiresFrom = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// Parse reads a standard five-field schedule or a descriptor (@yearly, @monthly, @weekly,
// @daily, @midnight, @hourly) in the IANA time zone tz (UTC when empty).
//
// @every is refused: it is a delay from whenever the controller last looked, not a time on
// the clock, so it cannot give the deterministic slot names that make a double fire
// impossible across hub failover. TZ= and CRON_TZ= are refused for spec.timeZone. A
// schedule that parses but names no real day (February 30th) is refused: robfig's Next
// answers it with the zero time, which no slot search can use.
func Parse(spec string, tz string) (cron.Schedule, error) {
	s := strings.TrimSpace(spec)
	switch {
	case strings.HasPrefix(s, "TZ=") || strings.HasPrefix(s, "CRON_TZ="):
		return nil, invalid("schedule", errors.New("the schedule must not set a time zone (TZ= or CRON_TZ=): use spec.timeZone"))
	case strings.HasPrefix(s, "@every"):
		return nil, invalid("schedule", errors.New("@every is not supported: use a five-field schedule such as */5 * * * *"))
	}
	loc, err := location(tz)
	if err != nil {
		return nil, invalid("timeZone", err)
	}
	sched, err := parseSpec(s)
	if err != nil {
		return nil, invalid("schedule", fmt.Errorf("invalid schedule %q: %w", spec, err))
	}
	spec2, ok := sched.(*cron.SpecSchedule)
	if !ok {
		return nil, invalid("schedule", fmt.Errorf("schedule %q is not a calendar schedule", spec))
	}
	spec2.Location = loc
	if spec2.Next(neverFiresFrom.In(loc)).IsZero() {
		return nil, invalid("schedule", fmt.Errorf("schedule %q never fires: no time matches it", spec))
	}
	return spec2, nil
}

// location loads an IANA zone. "Local" (in any case) is refused as the built-in CronJob
// refuses it: it means whichever zone the hub process happens to run in, so the same
// object would fire at different times on different replicas.
func location(tz string) (*time.Location, error) {
	switch {
	case tz == "":
		return time.UTC, nil
	case strings.EqualFold(strings.TrimSpace(tz), "local"):
		return nil, fmt.Errorf("time zone %q is not allowed: name an IANA zone such as Europe/Berlin, not the hub's local zone", tz)
	case strings.TrimSpace(tz) != tz:
		return nil, fmt.Errorf("unknown time zone %q: it has leading or trailing spaces", tz)
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q: %w", tz, err)
	}
	return loc, nil
}

// ErrNoNextSlot says a schedule has no slot after now: Parse refuses schedules that never
// fire, so only an object admitted without the webhook gets it, or a February 29th
// schedule in the years around 2100, which is no leap year. The message carries no time,
// so reporting it again does not change the status and wake the controller again.
var ErrNoNextSlot = errors.New("no time after now matches the schedule")

// Slots is what a schedule asks for at now.
type Slots struct {
	// Due is the latest slot in (earliest, now], nil when none.
	Due *time.Time
	// Missed counts the slots in (earliest, now], no further than TooManyMissed+1.
	Missed int
	// Next is the first slot after now.
	Next time.Time
}

// Plan finds the due and next slots with a bounded number of calls to Next, however far
// back earliest lies, and stops at the zero time robfig returns when nothing matches.
func Plan(sched cron.Schedule, earliest, now time.Time) (Slots, error) {
	due, missed := mostRecent(sched, earliest, now)
	next := sched.Next(now)
	if next.IsZero() {
		return Slots{Due: due, Missed: missed}, ErrNoNextSlot
	}
	return Slots{Due: due, Missed: missed, Next: next}, nil
}

// mostRecent returns the latest slot in (earliest, now], or nil, and how many slots fell in
// that window, counting no further than TooManyMissed+1. It calls Next at most
// TooManyMissed+1 times plus a binary search's worth.
func mostRecent(sched cron.Schedule, earliest, now time.Time) (*time.Time, int) {
	var last *time.Time
	missed := 0
	for t := sched.Next(earliest); !t.IsZero() && !t.After(now); t = sched.Next(t) {
		tt := t
		last = &tt
		if missed++; missed > TooManyMissed {
			// Only the latest slot matters now: search for it instead of walking every
			// slot since earliest, which may be years of minutes.
			return latestBefore(sched, tt, now), missed
		}
	}
	return last, missed
}

// latestBefore returns the latest slot in [from, now], given that from is a slot. It
// bisects the time between: a slot lies in (x, now] exactly when Next(x) is not after
// now, and slots are at least SlotResolution apart, so once the interval is that wide Next
// of its low end is the answer. Each halving costs one Next call: about 40 for a century.
func latestBefore(sched cron.Schedule, from, now time.Time) *time.Time {
	lo, hi := from, now
	for hi.Sub(lo) > SlotResolution {
		mid := lo.Add(hi.Sub(lo) / 2)
		if n := sched.Next(mid); !n.IsZero() && !n.After(now) {
			lo = mid
		} else {
			hi = mid
		}
	}
	if n := sched.Next(lo); !n.IsZero() && !n.After(now) {
		return &n
	}
	return &lo
}

// EarliestConsidered is where the search for missed slots starts: the last slot run (or
// the object's creation), but no earlier than startingDeadlineSeconds before now.
func EarliestConsidered(lastSchedule *time.Time, created time.Time, startingDeadline *int64, now time.Time) time.Time {
	earliest := created
	if lastSchedule != nil {
		earliest = *lastSchedule
	}
	// A deadline beyond what a Duration holds reaches further back than any slot: it
	// limits nothing (converting it would overflow into a limit in the future).
	if startingDeadline != nil && *startingDeadline <= int64(math.MaxInt64/time.Second) {
		if limit := now.Add(-time.Duration(*startingDeadline) * time.Second); earliest.Before(limit) {
			earliest = limit
		}
	}
	return earliest
}
