//go:build e2e

// Package work proves the hub→agent channel: Works are applied in their member, report
// their objects' status back, clean up on deletion, survive bad manifests, a hub outage
// and agent restarts.
package work

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
	os.Exit(framework.RunSuite(m, framework.SuiteConfig{Name: "work", Fleet: framework.FleetOptions{Members: 2, NodesPerMember: 3}}, &fleet, &muster))
}
