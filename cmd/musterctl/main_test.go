package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/testing/mainexec"
)

// The test binary runs main itself when asked to, so the tests see what a user of the
// built command sees: its name, its output and its exit code.
func TestMain(m *testing.M) { mainexec.Main(m, main) }

// run runs the command as program (a link to the test binary) with args.
func run(t *testing.T, program string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	r := mainexec.Run(t, program, []string{"KUBECONFIG=" + filepath.Join(t.TempDir(), "none")}, args...)
	return r.Stdout, r.Stderr, r.Code
}

func TestExitCodes(t *testing.T) {
	out, errOut, code := run(t, "musterctl", "version", "--client")
	if code != 0 || !strings.HasPrefix(out, "musterctl: ") || errOut != "" {
		t.Errorf("version --client: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = run(t, "musterctl", "frobnicate")
	if code != 1 || out != "" || !strings.HasPrefix(errOut, `error: unknown command "frobnicate" for "musterctl"`) {
		t.Errorf("unknown command: exit %d\n%s%s", code, out, errOut)
	}
}

// Installed as kubectl-muster, the command is the kubectl plugin and its help says so;
// under its own name it says musterctl.
func TestNamesItselfAfterItsBinary(t *testing.T) {
	for program, want := range map[string]string{
		"kubectl-muster": "kubectl muster token create",
		"musterctl":      "musterctl token create",
	} {
		out, errOut, code := run(t, program, "token", "create", "--help")
		if code != 0 || !strings.Contains(out, "Usage:\n  "+want+" [flags]") {
			t.Errorf("%s token create --help: exit %d, want usage of %q\n%s%s", program, code, want, out, errOut)
		}
	}
}
