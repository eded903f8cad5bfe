//go:build e2e

// Package fleetcronjob runs FleetCronJobs on a real fleet with the real clock: the hub's
// admission webhook refuses schedules CEL cannot check, a schedule creates a FleetJob in
// every slot that completes in both members, concurrency policies hold fleet-wide, and a
// slot fires once across a hub outage and a leader's death. The schedules name seconds
// (the local fleet's hub takes a seconds field, see framework.BuildTags), so slots come
// every few seconds rather than every minute; the kind suite fires on whole minutes.
package fleetcronjob

import (
	"fmt"
	"os"
	"testing"

	"github.com/musterhq/muster/e2e/framework"
)

var (
	fleet  *framework.Fleet
	muster *framework.Muster
)

// parallelTests is how many of the suite's parallel tests run at once. They wait for
// slots, not for the CPU: run all three together rather than GOMAXPROCS (2 on CI) at a
// time, which would add a whole test's waiting.
const parallelTests = 3

func TestMain(m *testing.M) {
	if err := framework.AtLeastParallel(parallelTests); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(framework.RunSuite(m, framework.SuiteConfig{Name: "fleetcronjob", Fleet: framework.FleetOptions{Members: 2, NodesPerMember: 2}}, &fleet, &muster))
}
