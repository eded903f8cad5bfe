package cronjob_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/testing/envtest"
)

// A cron whose controller looks 57 s after a slot, with four earlier slots unrun, records
// the run's lag and the four slots it skipped.
func TestSlotRecordsItsLagAndTheSlotsItSkipped(t *testing.T) {
	f := newFixture(t)
	fleetJob := map[string]string{"kind": "FleetJob"}
	runs := envtest.Metric(t, "muster_cron_schedule_lag_seconds", fleetJob)
	lag := envtest.HistogramSum(t, "muster_cron_schedule_lag_seconds", fleetJob)
	missed := envtest.Metric(t, "muster_cron_missed_slots_total", fleetJob)

	cj := f.cron("* * * * *")
	f.tick(cj, 5*time.Minute)
	due := f.m1.Add(4 * time.Minute)
	f.waitChildren(slotName(due))
	// The controller records the lag once its create has returned, which may be after the
	// run is visible here.
	envtest.Eventually(t, "the run's lag recorded", func() (bool, string) {
		got := envtest.Metric(t, "muster_cron_schedule_lag_seconds", fleetJob) - runs
		return got == 1, fmt.Sprintf("muster_cron_schedule_lag_seconds recorded %v runs, want 1", got)
	})
	wantLag := clock.Now().Sub(due).Seconds()
	if got := envtest.HistogramSum(t, "muster_cron_schedule_lag_seconds", fleetJob) - lag; got != wantLag {
		t.Errorf("muster_cron_schedule_lag_seconds recorded a lag of %vs, want %vs (slot to creation on the controller's clock)", got, wantLag)
	}
	if got := envtest.Metric(t, "muster_cron_missed_slots_total", fleetJob) - missed; got != 4 {
		t.Errorf("muster_cron_missed_slots_total grew by %v, want 4", got)
	}
}
