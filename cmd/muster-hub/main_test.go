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
// exit codes an operator of the built muster-hub sees.
func TestMain(m *testing.M) {
	if os.Getenv("MUSTER_HUB_RUN_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

func runHub(t *testing.T, args ...string) (stderr string, code int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "MUSTER_HUB_RUN_MAIN=1")
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

// A kubeconfig that loads but names a cluster that is not there: muster-hub reads it
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

// Bad configuration ends the hub at once with exit 1 and a message naming the binary.
func TestBadConfigurationExitsOne(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--kubeconfig", filepath.Join(t.TempDir(), "absent")}, "muster-hub: stat "},
		{[]string{"--kubeconfig", offlineKubeconfig(t), "--default-pod-security-level", "lax"}, `muster-hub: --default-pod-security-level: default pod security level "lax": must be one of privileged, baseline, restricted`},
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
