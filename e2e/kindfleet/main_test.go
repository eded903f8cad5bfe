//go:build e2ekind

// Package kindfleet runs Muster on real clusters: kind clusters from the node image built
// on this machine (e2e/nodeimage), on the engine the tooling starts when none runs
// (e2e/engine). The smoke tests check what everything else stands on: every node Ready, a
// real container runs to completion in every cluster, a pod of one cluster reaches another
// cluster's API server over the kind network. The install tests then install Muster the
// way users do, from images built here: helm install of the muster-hub chart deploys the
// hub, helm install of the muster-agent chart (its join line as values) member1's agent and
// musterctl join member2's, musterctl accept admits them, and jobs run real containers
// across the members.
package kindfleet

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/e2e/framework/kind"
	"github.com/musterhq/muster/e2e/images"
)

// signingDuration is how long the hub's agent certificates last in this fleet: short, so
// that every agent rotates during the suite.
const signingDuration = 3 * time.Minute

// keepEnv, when set, leaves the fleet up after the tests, to look at what they left.
const keepEnv = "MUSTER_E2E_KEEP_FLEET"

var (
	fleet    *framework.Fleet
	workload string
)

// parallelTests is how many tests run at once at the end of the suite: the two that run
// side by side there, one of them with two parallel rows. They wait for a minute's slot and
// for a re-join, not for the CPU.
const parallelTests = 3

func TestMain(m *testing.M) {
	if err := framework.AtLeastParallel(parallelTests); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "muster-e2e-kindfleet-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if os.Getenv(keepEnv) == "" {
		defer os.RemoveAll(dir)
	}

	start := time.Now()
	f, err := framework.Up(ctx, framework.FleetOptions{Dir: dir, Provider: kind.ProviderName, Members: 2, HubSigningDuration: signingDuration})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bringing the kind fleet up:", err)
		return 1
	}
	fleet = f
	defer func() {
		if os.Getenv(keepEnv) != "" {
			fmt.Printf("kindfleet: %s is set: the fleet stays up (kubeconfigs in %s; make fleet-down FLEET_DIR=%s removes it)\n", keepEnv, dir, dir)
			return
		}
		if err := f.Down(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "tearing the kind fleet down:", err)
		}
	}()
	fmt.Printf("kindfleet: engine, node image and %d clusters ready in %s\n", len(f.Clusters()), time.Since(start).Round(time.Second))

	if workload, err = images.BuildScratch(ctx, images.Workload, "muster.local/e2e-workload"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	p := f.Provider.(*kind.Provider)
	for _, c := range f.Clusters() {
		if err := p.LoadImageArchive(c.Name, images.Archive(ctx, workload)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	code := m.Run()
	if admission != nil {
		report, err := admission.stop(ctx, fleet.Hub)
		fmt.Printf("kindfleet: admission through the hub's webhooks: %s\n", report)
		if err != nil {
			fmt.Printf("--- FAIL: admission through the hub's webhooks during the suite\n    %v\n", err)
			code = 1
		}
	}
	// Last, as it takes the hub away: what helm uninstall leaves behind.
	if installed != nil && installed.HelmReleases[fleet.Hub.Name] != "" {
		took, err := helmUninstallLeavesNoWebhook(ctx)
		if err != nil {
			fmt.Printf("--- FAIL: helm uninstall of the hub\n    %v\n", err)
			code = 1
		} else {
			fmt.Printf("kindfleet: helm uninstall of the hub left no webhook configuration (garbage-collected with its ClusterRole) and its CRDs serving, in %s\n", took.Round(100*time.Millisecond))
		}
	}
	for _, member := range fleet.Members {
		if installed == nil || installed.HelmReleases[member.Name] == "" {
			continue
		}
		took, err := helmUninstallOfAnAgentLeavesOnlyItsCRD(ctx, member)
		if err != nil {
			fmt.Printf("--- FAIL: helm uninstall of %s's agent\n    %v\n", member.Name, err)
			code = 1
		} else {
			fmt.Printf("kindfleet: helm uninstall of %s's agent removed its namespace, RBAC and Work executor and kept its CRD, in %s\n", member.Name, took.Round(100*time.Millisecond))
		}
	}
	return code
}
