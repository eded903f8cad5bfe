//go:build e2e

// Package fleetcronjob runs FleetCronJobs on a real fleet with the real clock: the hub's
// admission webhook refuses schedules CEL cannot check, and a schedule creates a FleetJob
// every minute that completes in both members.
package fleetcronjob

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/musterhq/muster/e2e/framework"
)

var (
	fleet  *framework.Fleet
	muster *framework.Muster
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "muster-e2e-fleetcronjob-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	fleet, err = framework.Up(ctx, framework.FleetOptions{Dir: dir, Members: 2, NodesPerMember: 2})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bringing the fleet up:", err)
		return 1
	}
	defer func() {
		if muster != nil {
			muster.Stop()
		}
		if err := fleet.Down(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "tearing the fleet down:", err)
		}
	}()
	if muster, err = framework.InstallHub(ctx, fleet); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := muster.StartHubProcess("--leader-elect=false"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := muster.JoinAndAccept(ctx, fleet.Members); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if code != 0 && muster.HubProc != nil {
		if raw, err := os.ReadFile(muster.HubProc.Log); err == nil {
			if len(raw) > 5000 {
				raw = raw[len(raw)-5000:]
			}
			fmt.Fprintf(os.Stderr, "----- hub log (tail) -----\n%s\n", raw)
		}
	}
	return code
}
