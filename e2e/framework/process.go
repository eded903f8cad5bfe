package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/musterhq/muster/internal/testing/envtest"
)

// Binaries are Muster's commands built for a test run.
type Binaries struct {
	Hub, Agent, Musterctl string
	// Helm is the helm command of the version go.mod pins (its tool line).
	Helm string
}

var (
	buildOnce sync.Once
	built     Binaries
	buildErr  error
)

// BinDirEnv names a directory that already holds muster-hub, muster-agent and musterctl
// built from this checkout (`make e2e` builds them once for all its suites): linking the
// three binaries again in every suite's process took 20 to 50 seconds of a loaded machine.
const BinDirEnv = "MUSTER_E2E_BIN_DIR"

// BuildTags are the build tags of the local fleet's binaries (the Makefile's
// E2E_BUILD_TAGS), the tag the local suites are built with: with it a FleetCronJob
// schedule may begin with a seconds field, so the suites wait seconds for a slot rather
// than minutes (package api/cronjob). The kind suites' images are built without it, as a
// release is.
const BuildTags = "e2e"

// BuildBinaries compiles muster-hub, muster-agent and musterctl from this checkout once
// per test process, or uses those in $MUSTER_E2E_BIN_DIR when it is set.
func BuildBinaries(ctx context.Context, dir string) (Binaries, error) {
	buildOnce.Do(func() {
		if pre := os.Getenv(BinDirEnv); pre != "" {
			built, buildErr = prebuilt(pre)
			return
		}
		root, err := RepoRoot()
		if err != nil {
			buildErr = err
			return
		}
		cmd := exec.CommandContext(ctx, "go", "build", "-tags", BuildTags, "-o", dir+string(os.PathSeparator), "./cmd/muster-hub", "./cmd/muster-agent", "./cmd/musterctl", HelmPackage)
		cmd.Dir = root
		// Static, as in the images (package images), so both share one compile cache.
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building Muster's binaries: %w\n%s", err, out)
			return
		}
		built = binariesIn(dir)
	})
	return built, buildErr
}

// prebuilt returns the binaries in dir, which must all be there: a suite run against a
// half-built directory would test whatever an older build left.
func prebuilt(dir string) (Binaries, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Binaries{}, err
	}
	b := binariesIn(dir)
	for _, p := range []string{b.Hub, b.Agent, b.Musterctl, b.Helm} {
		if _, err := os.Stat(p); err != nil {
			return Binaries{}, fmt.Errorf("%s=%s: %w", BinDirEnv, dir, err)
		}
	}
	return b, nil
}

// HelmPackage is the helm command's package, built at the version go.mod requires.
const HelmPackage = "helm.sh/helm/v4/cmd/helm"

func binariesIn(dir string) Binaries {
	return Binaries{
		Hub: filepath.Join(dir, "muster-hub"), Agent: filepath.Join(dir, "muster-agent"),
		Musterctl: filepath.Join(dir, "musterctl"), Helm: filepath.Join(dir, "helm"),
	}
}

// RepoRoot finds the module root by walking up from the working directory.
var RepoRoot = envtest.RepoRoot

// Process is a long-running command whose output goes to a log file.
type Process struct {
	Name string
	Log  string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// StartProcess starts bin with args, logging to logPath.
func StartProcess(name, logPath, bin string, args ...string) (*Process, error) {
	return StartProcessWithEnv(name, logPath, bin, nil, args...)
}

// StartProcessWithEnv starts bin with args and, besides this process's environment, env
// (KEY=value entries), logging to logPath.
func StartProcessWithEnv(name, logPath, bin string, env []string, args ...string) (*Process, error) {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group, so that stopping it never signals the test binary.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{Name: name, Log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Running reports whether the process has not exited.
func (p *Process) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Stop sends SIGTERM and waits up to 10s before killing the process.
func (p *Process) Stop() {
	if !p.Running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.Kill()
	}
}

// Kill ends the process at once, as a crash would.
func (p *Process) Kill() {
	if !p.Running() {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// pidDir holds the pid files of processes that outlive the command that started them.
func pidDir(fleetDir string) string { return filepath.Join(fleetDir, "pids") }

// StartDetached starts a process that keeps running after this program exits (the demo's
// hub and agents); Down stops it.
func StartDetached(fleetDir, name, bin string, args ...string) (int, error) {
	logPath := filepath.Join(fleetDir, "logs", name+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(pidDir(fleetDir), 0o755); err != nil {
		return 0, err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting %s: %w", name, err)
	}
	pid := cmd.Process.Pid
	if err := os.WriteFile(filepath.Join(pidDir(fleetDir), name+".pid"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return pid, err
	}
	return pid, cmd.Process.Release()
}

// stopDetached stops every process StartDetached recorded in fleetDir.
func stopDetached(fleetDir string) error {
	files, _ := filepath.Glob(filepath.Join(pidDir(fleetDir), "*.pid"))
	var errs []error
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
		if err != nil || pid <= 0 {
			continue
		}
		if err := terminate(pid); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", filepath.Base(f), err))
			continue
		}
		_ = os.Remove(f)
	}
	return errors.Join(errs...)
}

// terminate sends SIGTERM, waits up to 10s, then SIGKILL.
func terminate(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return nil // already gone
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) != nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return syscall.Kill(pid, syscall.SIGKILL)
}
