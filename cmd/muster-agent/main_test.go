package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The test binary runs main itself when asked to: the tests see the flags, messages and
// exit codes an operator of the built muster-agent sees.
func TestMain(m *testing.M) {
	if os.Getenv("MUSTER_AGENT_RUN_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

func runAgent(t *testing.T, args ...string) (stderr string, code int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "MUSTER_AGENT_RUN_MAIN=1")
	var errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &errOut, &errOut
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return errOut.String(), code
}

// A kubeconfig that loads but names a cluster that is not there: muster-agent reads it
// without connecting, so the checks after it run.
func offlineKubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	kc := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\nusers:\n- name: u\n  user:\n    token: x\ncurrent-context: c\n"
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Bad configuration ends the agent at once with exit 1 and a message naming the binary.
func TestBadConfigurationExitsOne(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--kubeconfig", filepath.Join(t.TempDir(), "absent")}, "muster-agent: stat "},
		{[]string{"--kubeconfig", offlineKubeconfig(t), "--work-executor", "no-slash"}, `muster-agent: --work-executor: work executor "no-slash": want NAMESPACE/NAME of a ServiceAccount`},
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
