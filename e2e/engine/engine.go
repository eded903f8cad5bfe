// Package engine makes sure a container engine answers for the kind e2e suites. Where one
// already runs (a developer's laptop, a CI runner with Docker) it is used as it is. Where
// none does and the user is root, as on this project's CI machines, it installs Debian's
// docker.io and starts dockerd, with the capability-filtering runtime (cmd muster-runc)
// when the host's capability bounding set would make privileged containers fail.
package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
	// When Docker would grant privileged containers capabilities this host lacks, runc
	// needs the filtering runtime.
	missing, err := capfilter.Ungrantable()
	if err != nil {
		return err
	}
	if err := ping(ctx); err == nil {
		return checkRunningEngine(ctx, stateDir, missing, log)
	}
	if os.Geteuid() != 0 {
		return errors.New("no container engine answers `docker info`, and only root may start one here: start Docker (or Podman) and retry")
	}
	if _, err := exec.LookPath("dockerd"); err != nil {
		fmt.Fprintln(log, "engine: installing Debian's docker.io")
		if err := aptInstall(ctx, log, "docker.io"); err != nil {
			return err
		}
	}
	var args []string
	if len(missing) > 0 {
		// Flags rather than daemon.json, so no configuration of the machine's is rewritten.
		fmt.Fprintf(log, "engine: this host's bounding set lacks %s; privileged containers run through %s\n", strings.Join(missing, ", "), runtimeName)
		bin, err := buildRuntime(ctx, stateDir)
		if err != nil {
			return err
		}
		args = []string{"--add-runtime", runtimeName + "=" + bin, "--default-runtime", runtimeName}
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

// checkRunningEngine looks at an engine that already answers. One started here earlier
// runs the filtering runtime from stateDir: it is rebuilt in place, so that a cleaned cache
// or a changed wrapper never leaves dockerd pointing at a missing or stale binary. One
// started otherwise, on a host that needs the wrapper, cannot run kind nodes: say how to
// fix it instead of letting every node fail with "unable to apply caps".
func checkRunningEngine(ctx context.Context, stateDir string, missing []string, log io.Writer) error {
	if len(missing) == 0 {
		return nil
	}
	out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.DefaultRuntime}}").Output()
	if err != nil {
		return fmt.Errorf("asking the engine for its default runtime: %w", err)
	}
	if runtime := strings.TrimSpace(string(out)); runtime != runtimeName {
		fmt.Fprintf(log, "engine: warning: this host lacks %s and the running engine's default runtime is %s, so privileged containers (kind nodes) will not start; stop it and let the tests start one, or run dockerd with --add-runtime %s=<muster-runc> --default-runtime %s\n",
			strings.Join(missing, ", "), runtime, runtimeName, runtimeName)
		return nil
	}
	_, err = buildRuntime(ctx, stateDir)
	return err
}

// buildRuntime builds muster-runc into stateDir and returns its path. It is renamed into
// place, so a dockerd using the old binary meanwhile never runs half a file.
func buildRuntime(ctx context.Context, stateDir string) (string, error) {
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(stateDir, runtimeName)
	build := exec.CommandContext(ctx, "go", "build", "-o", bin+".new", "github.com/musterhq/muster/e2e/cmd/muster-runc")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %w\n%s", runtimeName, err, out)
	}
	if err := os.Rename(bin+".new", bin); err != nil {
		return "", fmt.Errorf("installing %s: %w", runtimeName, err)
	}
	return bin, nil
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
	if err := keepInheritedFilesFromChildren(); err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	return cmd.Process.Release()
}

// keepInheritedFilesFromChildren marks every descriptor above stderr close-on-exec. Go opens
// its own files that way, but descriptors this process inherited are passed on to every
// child: a daemon that outlives the tests would keep them open for good — a lock file of
// `flock make test`, say, which then stays locked until the engine stops.
func keepInheritedFilesFromChildren() error {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("listing this process's open files: %w", err)
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
	return nil
}
