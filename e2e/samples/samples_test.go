//go:build e2e

package samples

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/musterhq/muster/e2e/framework"
)

// sampleCheck applies one sample as its header says and waits for its documented end state.
type sampleCheck struct {
	file  string
	check func(t *testing.T, ctx context.Context)
}

// checks run in this order: the cluster label first, Works and inventory, then the jobs;
// the FleetCronJob last, since its first run waits for the next minute. It is applied
// before all of them (appliedFirst), so that minute passes while the others run; its
// check applies it again, which changes nothing.
var checks = []sampleCheck{
	{"membercluster.yaml", checkMemberCluster},
	{"work.yaml", checkWork},
	{"nodeslice.yaml", checkNodeSlice},
	{"fleetjob.yaml", checkFleetJob},
	{"broadcastjob.yaml", checkBroadcastJob},
	{"workloadspread.yaml", checkWorkloadSpread},
	{"fleetcronjob.yaml", checkFleetCronJob},
}

// appliedFirst are the samples applied before any check runs: their end state waits for
// the clock, not for the samples checked before them.
var appliedFirst = []string{"fleetcronjob.yaml"}

// jobTimeout bounds how long a sample job takes to finish on the fleet.
const jobTimeout = 2 * time.Minute

func TestEverySampleReachesItsDocumentedState(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "deploy", "samples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]bool{}
	for _, c := range checks {
		checked[c.file] = true
	}
	for _, f := range files {
		if !checked[filepath.Base(f)] {
			t.Errorf("deploy/samples/%s has no check here: add one that waits for the end state its header documents", filepath.Base(f))
		}
	}
	for _, f := range appliedFirst {
		kubectl(t, t.Context(), "apply", "-f", samplePath(f))
	}
	for _, c := range checks {
		t.Run(c.file, func(t *testing.T) {
			start := time.Now()
			c.check(t, t.Context())
			t.Logf("%s reached its end state in %s", c.file, time.Since(start).Round(time.Second))
		})
	}
}

// waitFor polls until cond holds, failing the test with the last state it saw.
func waitFor(t *testing.T, ctx context.Context, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string, error)) {
	t.Helper()
	if err := framework.Until(ctx, timeout, what, cond); err != nil {
		t.Fatal(err)
	}
}

func key(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}
