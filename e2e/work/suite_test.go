//go:build e2e

// Package work proves the hub→agent channel: Works are applied in their member, report
// their objects' status back, clean up on deletion, survive bad manifests, a hub outage
// and agent restarts.
package work

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
	dir, err := os.MkdirTemp("", "muster-e2e-work-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	fleet, err = framework.Up(ctx, framework.FleetOptions{Dir: dir, Members: 2, NodesPerMember: 3})
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
		dumpLogs()
		return 1
	}
	code := m.Run()
	if code != 0 {
		dumpLogs()
	}
	return code
}

func dumpLogs() {
	for name, p := range muster.Agents {
		if raw, err := os.ReadFile(p.Log); err == nil {
			if len(raw) > 6000 {
				raw = raw[len(raw)-6000:]
			}
			fmt.Fprintf(os.Stderr, "----- agent %s log (tail) -----\n%s\n", name, raw)
		}
	}
}
