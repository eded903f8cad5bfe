package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The test binary runs main itself when asked to, so the tests see what a user of the
// built command sees: its name, its output and its exit code.
func TestMain(m *testing.M) {
	if os.Getenv("MUSTERCTL_RUN_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// run runs the command as program (a link to the test binary) with args.
func run(t *testing.T, program string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), program)
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(link, args...)
	cmd.Env = append(os.Environ(), "MUSTERCTL_RUN_MAIN=1", "KUBECONFIG="+filepath.Join(t.TempDir(), "none"))
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
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
