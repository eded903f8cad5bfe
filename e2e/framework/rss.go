package framework

import (
	"bufio"
	"fmt"
	"os"
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
