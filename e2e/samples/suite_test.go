//go:build e2e

// Package samples applies every file in deploy/samples, as shipped, to a fleet shaped like
// the demo fleet (`make demo`: a hub and members member1 and member2 with three nodes
// each, joined with musterctl) with kubectl, as the README says, and waits for each to
// reach the end state its header documents.
package samples

import (
	"os"
	"testing"

	"github.com/musterhq/muster/e2e/framework"
)

var (
	fleet  *framework.Fleet
	muster *framework.Muster
)

// demoMembers and demoNodes are make demo's FLEET_MEMBERS and FLEET_NODES defaults.
const (
	demoMembers = 2
	demoNodes   = 3
)

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, framework.SuiteConfig{
		Name:  "samples",
		Fleet: framework.FleetOptions{Members: demoMembers, NodesPerMember: demoNodes},
	}, &fleet, &muster))
}
