//go:build e2e

package samples

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/internal/testing/toolchain"
)

// kubectl runs the toolchain's kubectl against the hub from the repository root, so that
// paths such as deploy/samples/fleetjob.yaml are the README's, and returns its output.
func kubectl(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	cache, err := toolchain.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	tc, err := toolchain.Locate(cache)
	if err != nil {
		t.Fatal(err)
	}
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, tc.Path(toolchain.Kubectl), append([]string{"--kubeconfig", fleet.Hub.Kubeconfig}, args...)...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// samplePath is a sample's path relative to the repository root, as the README names it.
func samplePath(file string) string { return filepath.Join("deploy", "samples", file) }

// musterctl runs musterctl against the hub and fails the test on a non-zero exit.
func musterctl(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	out, err := muster.Musterctl(ctx, fleet.Hub, args...)
	if err != nil {
		t.Fatalf("musterctl %v: %v", args, err)
	}
	return out
}
