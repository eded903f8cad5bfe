package framework

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// PID is the process id of a running process, 0 once it exited.
func (p *Process) PID() int {
	if !p.Running() || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// RSS is the process's resident memory in bytes, as the kernel reports it in
// /proc/<pid>/status (VmRSS): what an out-of-memory kill looks at.
func (p *Process) RSS() (int64, error) {
	pid := p.PID()
	if pid == 0 {
		return 0, fmt.Errorf("%s is not running", p.Name)
	}
	return readRSS(fmt.Sprintf("/proc/%d/status", pid))
}

// readRSS reads the VmRSS line ("VmRSS:   55112 kB") of a /proc status file.
func readRSS(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("reading resident memory: %w", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		rest, ok := strings.CutPrefix(s.Text(), "VmRSS:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("%s: unexpected VmRSS line %q", path, s.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		return kb << 10, nil
	}
	if err := s.Err(); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return 0, fmt.Errorf("%s has no VmRSS line", path)
}

// RSSOf is the resident memory of process pid in bytes (VmRSS).
func RSSOf(pid int) (int64, error) {
	return readRSS(fmt.Sprintf("/proc/%d/status", pid))
}

// FindProcesses lists the running processes whose executable is called name and whose
// command line mentions within (a fleet's directory, say): a control plane's processes
// started by another program.
func FindProcesses(name, within string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || len(raw) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if filepath.Base(args[0]) == name && strings.Contains(string(raw), within) {
			pids = append(pids, pid)
		}
	}
	return pids
}
