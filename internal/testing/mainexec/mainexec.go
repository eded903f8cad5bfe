// Package mainexec runs a command's main from its own test binary, so that a main
// package's tests see what an operator of the built binary sees: its name, its output,
// its exit code.
package mainexec

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runMainEnv tells the test binary to run main instead of the tests.
const runMainEnv = "MUSTER_TEST_RUN_MAIN"

// Main is a main package's TestMain: the test binary runs main when Run starts it, and
// the tests otherwise.
func Main(m *testing.M, main func()) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// Result is what one run printed and how it exited.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Run runs the test binary as the command, with args and env added to the environment.
// A program name other than "" runs it through a link of that name, for commands whose
// behaviour follows the name they are run by.
func Run(t *testing.T, program string, env []string, args ...string) Result {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if program != "" {
		link := filepath.Join(t.TempDir(), program)
		if err := os.Symlink(exe, link); err != nil {
			t.Fatal(err)
		}
		exe = link
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(append(os.Environ(), runMainEnv+"=1"), env...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	var r Result
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.Code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	r.Stdout, r.Stderr = out.String(), errOut.String()
	return r
}

// OfflineKubeconfig writes a kubeconfig that loads but names an API server that is not
// there: a binary reads it without connecting, so the checks after loading it run.
func OfflineKubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	kc := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\nusers:\n- name: u\n  user:\n    token: x\ncurrent-context: c\n"
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
