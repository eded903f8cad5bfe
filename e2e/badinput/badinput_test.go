//go:build e2e

package badinput

import (
	"testing"
	"time"
)

// TestBadInput runs the phases in order: the health checks at the end judge the fleet
// after everything before them. It runs beside TestNamesCannotBeTaken and TestTenancy,
// whose few small jobs on member1 are part of what the fleet has been through.
func TestBadInput(t *testing.T) {
	t.Parallel()
	start := rssAll(t)
	t.Logf("resident memory at the start: %s", start)
	began := time.Now()
	t.Run("refused", func(t *testing.T) {
		for _, tc := range refusedCases() {
			t.Run(tc.name(), func(t *testing.T) { expectRefused(t, fleet.Hub.Client, tc) })
		}
	})
	t.Logf("refused cases took %s", time.Since(began).Round(time.Millisecond))
	began = time.Now()
	t.Run("accepted", func(t *testing.T) {
		for _, tc := range acceptedCases() {
			t.Run(tc.name(), func(t *testing.T) {
				t.Parallel()
				expectAccepted(t, tc)
			})
		}
	})
	t.Logf("accepted cases took %s", time.Since(began).Round(time.Millisecond))
	t.Run("FleetJob Indexed completions 2147483647 parallelism 4 Divided -> runs with the agents' memory flat", testHugeIndexed)
	t.Run("afterwards", func(t *testing.T) {
		t.Run("hub and agents still run with at most twice their starting memory", func(t *testing.T) { expectHealthyProcesses(t, start) })
		t.Run("a healthy FleetJob completes on time", testHealthyFleetJob)
		t.Run("a FleetCronJob every 10s fires its next slot on time and the run completes", testHealthyCron)
	})
}
