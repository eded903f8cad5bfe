package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/testing/mainexec"
)

// The test binary runs main itself when asked to: the tests see the flags, messages and
// exit codes an operator of the built muster-hub sees.
func TestMain(m *testing.M) { mainexec.Main(m, main) }

// runHub runs muster-hub with args and returns what it printed, stdout and stderr together.
func runHub(t *testing.T, args ...string) (string, int) {
	t.Helper()
	r := mainexec.Run(t, "", nil, args...)
	return r.Stdout + r.Stderr, r.Code
}

// Bad configuration ends the hub at once with exit 1 and a message naming the binary.
func TestBadConfigurationExitsOne(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--kubeconfig", filepath.Join(t.TempDir(), "absent")}, "muster-hub: stat "},
		{[]string{"--kubeconfig", mainexec.OfflineKubeconfig(t), "--default-pod-security-level", "lax"}, `muster-hub: --default-pod-security-level: default pod security level "lax": must be one of privileged, baseline, restricted`},
	} {
		out, code := runHub(t, c.args...)
		if code != 1 || !strings.Contains(out, c.want) {
			t.Errorf("muster-hub %v: exit %d, want 1 and %q:\n%s", c.args, code, c.want, out)
		}
	}
	if out, code := runHub(t, "--no-such-flag"); code != 2 || !strings.Contains(out, "unknown flag: --no-such-flag") {
		t.Errorf("unknown flag: exit %d, want 2:\n%s", code, out)
	}
}

// --help lists the hub's own flags and the logging flags next to them.
func TestHelpListsHubAndLoggingFlags(t *testing.T) {
	out, code := runHub(t, "--help")
	if code != 0 {
		t.Fatalf("--help: exit %d\n%s", code, out)
	}
	for _, flag := range []string{"--kubeconfig", "--leader-elect", "--auto-accept-clusters", "--max-agent-certificate-lifetime", "--zap-log-level"} {
		if !strings.Contains(out, flag) {
			t.Errorf("--help does not list %s:\n%s", flag, out)
		}
	}
}
