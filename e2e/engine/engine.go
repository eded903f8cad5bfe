// Package engine makes sure a container engine answers for the kind e2e suites. Where one
// already runs (a developer's laptop, a CI runner with Docker) it is used as it is. Where
// none does and the user is root, as on this project's CI machines, it installs Debian's
// docker.io and starts dockerd, with the capability-filtering runtime (cmd muster-runc)
// when the host's capability bounding set would make privileged containers fail.
package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/musterhq/muster/e2e/engine/capfilter"
)

// runtimeName is what the filtering runtime is registered as in dockerd.
const runtimeName = "muster-runc"

// Ensure returns once `docker info` answers, starting an engine first if it has to.
// stateDir keeps the filtering runtime's binary and dockerd's log.
func Ensure(ctx context.Context, stateDir string, log io.Writer) error {
	if err := ping(ctx); err == nil {
		return nil
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("no container engine answers `docker info`, and only root may start one here: start Docker (or Podman) and retry")
	}
	if _, err := exec.LookPath("dockerd"); err != nil {
		fmt.Fprintln(log, "engine: installing Debian's docker.io")
		if err := aptInstall(ctx, log, "docker.io"); err != nil {
			return err
		}
	}
	args, err := dockerdArgs(ctx, stateDir, log)
	if err != nil {
		return err
	}
	if err := startDetached(filepath.Join(stateDir, "dockerd.log"), "dockerd", args...); err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		err := ping(ctx)
		if err == nil {
			fmt.Fprintln(log, "engine: dockerd is up")
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("dockerd did not answer within a minute (log: %s): %w", filepath.Join(stateDir, "dockerd.log"), err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// dockerdArgs registers the filtering runtime as dockerd's default when the bounding set
// lacks a capability; flags rather than daemon.json, so no configuration of the machine's
// is rewritten.
func dockerdArgs(ctx context.Context, stateDir string, log io.Writer) ([]string, error) {
	mask, err := capfilter.BoundingSet()
	if err != nil {
		return nil, err
	}
	lastCap, err := capfilter.LastCap()
	if err != nil {
		return nil, err
	}
	missing := capfilter.Missing(mask, lastCap)
	if len(missing) == 0 {
		return nil, nil
	}
	fmt.Fprintf(log, "engine: this host's bounding set lacks %s; privileged containers run through %s\n", strings.Join(missing, ", "), runtimeName)
	bin := filepath.Join(stateDir, runtimeName)
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return nil, err
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/musterhq/muster/e2e/cmd/muster-runc")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building %s: %w\n%s", runtimeName, err, out)
	}
	return []string{"--add-runtime", runtimeName + "=" + bin, "--default-runtime", runtimeName}, nil
}

func ping(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}}")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("docker info: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// aptInstall installs Debian packages; used only as root on a machine without them.
func aptInstall(ctx context.Context, log io.Writer, pkgs ...string) error {
	for _, args := range [][]string{{"update", "-qq"}, append([]string{"install", "-y", "-qq", "--no-install-recommends"}, pkgs...)} {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("apt-get %s: %w", strings.Join(args, " "), err)
		}
	}
	return nil
}

// AptInstall installs the Debian packages whose commands are missing, as root; it fails
// with what to install otherwise. commands maps a command to the package providing it.
func AptInstall(ctx context.Context, log io.Writer, commands map[string]string) error {
	var pkgs []string
	for cmd, pkg := range commands {
		if _, err := exec.LookPath(cmd); err != nil {
			pkgs = append(pkgs, pkg)
		}
	}
	if len(pkgs) == 0 {
		return nil
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("install %s (missing commands)", strings.Join(pkgs, " "))
	}
	return aptInstall(ctx, log, pkgs...)
}

// startDetached starts a daemon in its own session, so that it outlives the test process
// that started it: the next suite, and the developer's next run, find it running.
func startDetached(logPath, bin string, args ...string) error {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	return cmd.Process.Release()
}
