//go:build e2e

// Package fleetcronjob runs FleetCronJobs on a real fleet with the real clock: the hub's
// admission webhook refuses schedules CEL cannot check, and a schedule creates a FleetJob
// every minute that completes in both members.
package fleetcronjob

import (
	"os"
	"testing"

	"github.com/musterhq/muster/e2e/framework"
)

var (
	fleet  *framework.Fleet
	muster *framework.Muster
)

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, framework.SuiteConfig{Name: "fleetcronjob", Fleet: framework.FleetOptions{Members: 2, NodesPerMember: 2}}, &fleet, &muster))
}
