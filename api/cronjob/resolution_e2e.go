//go:build e2e

package cronjob

import (
	"time"

	"github.com/robfig/cron/v3"
)

// Built with the e2e tag, as the local fleet's binaries are (make e2e-bin, make demo) and
// the local e2e suites that talk to them, a schedule may begin with a seconds field,
// robfig's optional sixth: those suites wait seconds for a slot, not whole minutes.
// Five-field schedules mean what they always do. No release is built so: the kind suites'
// images are built without the tag, and test them on whole minutes.
//
// SlotResolution is the least time between two slots of one schedule; children are named
// by their slot in these units.
const SlotResolution = time.Second

var secondsParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// parseSpec parses a schedule of five fields, or six with seconds first, or a descriptor.
func parseSpec(spec string) (cron.Schedule, error) { return secondsParser.Parse(spec) }
