//go:build !e2e

package cronjob

import (
	"time"

	"github.com/robfig/cron/v3"
)

// SlotResolution is the least time between two slots of one schedule: a standard schedule's
// finest field is the minute. Children are named by their slot in these units.
const SlotResolution = time.Minute

// parseSpec parses a standard five-field schedule or a descriptor.
func parseSpec(spec string) (cron.Schedule, error) { return cron.ParseStandard(spec) }
