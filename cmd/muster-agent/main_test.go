package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/testing/mainexec"
)

// The test binary runs main itself when asked to: the tests see the flags, messages and
// exit codes an operator of the built muster-agent sees.
func TestMain(m *testing.M) { mainexec.Main(m, main) }

// runAgent runs muster-agent with args and returns what it printed, stdout and stderr together.
func runAgent(t *testing.T, args ...string) (string, int) {
	t.Helper()
	r := mainexec.Run(t, "", nil, args...)
	return r.Stdout + r.Stderr, r.Code
}

// Bad configuration ends the agent at once with exit 1 and a message naming the binary.
func TestBadConfigurationExitsOne(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--kubeconfig", filepath.Join(t.TempDir(), "absent")}, "muster-agent: stat "},
		{[]string{"--kubeconfig", mainexec.OfflineKubeconfig(t), "--work-executor", "no-slash"}, `muster-agent: --work-executor: work executor "no-slash": want NAMESPACE/NAME of a ServiceAccount`},
	} {
		out, code := runAgent(t, c.args...)
		if code != 1 || !strings.Contains(out, c.want) {
			t.Errorf("muster-agent %v: exit %d, want 1 and %q:\n%s", c.args, code, c.want, out)
		}
	}
	if out, code := runAgent(t, "--no-such-flag"); code != 2 || !strings.Contains(out, "unknown flag: --no-such-flag") {
		t.Errorf("unknown flag: exit %d, want 2:\n%s", code, out)
	}
}

// --help lists the agent's own flags and the logging flags next to them.
func TestHelpListsHubAndLoggingFlags(t *testing.T) {
	out, code := runAgent(t, "--help")
	if code != 0 {
		t.Fatalf("--help: exit %d\n%s", code, out)
	}
	for _, flag := range []string{"--kubeconfig", "--leader-elect", "--work-executor", "--job-batch-period", "--zap-log-level"} {
		if !strings.Contains(out, flag) {
			t.Errorf("--help does not list %s:\n%s", flag, out)
		}
	}
}
