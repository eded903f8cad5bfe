// Package capfilter removes, from an OCI runtime spec, the capabilities that the calling
// process's bounding set does not hold. runc refuses to start a container that asks for a
// capability the kernel will not grant ("unable to apply caps: operation not permitted");
// Docker's --privileged asks for every capability it knows, so on a host whose bounding set
// lacks one (some VMs drop CAP_SYS_RESOURCE) no privileged container, and so no kind node,
// can start. Filtering the spec down to what can actually be granted is exactly what the
// container would get anyway.
package capfilter

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// names lists the capabilities by number, as in linux/capability.h.
var names = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
	"CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW",
	"CAP_IPC_LOCK", "CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT",
	"CAP_SYS_PTRACE", "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
	"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE",
	"CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE",
	"CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ",
	"CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE",
}

// Missing returns the capabilities, numbered up to lastCap (the running kernel's highest,
// from LastCap), absent from a bounding set given as the hex mask of /proc/<pid>/status's
// CapBnd line. Capabilities above lastCap are not reported: the kernel does not know them
// (kernels before 5.9 have no CAP_PERFMON, CAP_BPF or CAP_CHECKPOINT_RESTORE), so Docker
// does not ask for them and they need no filtering.
func Missing(capBnd uint64, lastCap int) []string {
	var missing []string
	for i, name := range names {
		if i > lastCap {
			break
		}
		if capBnd&(1<<uint(i)) == 0 {
			missing = append(missing, name)
		}
	}
	return missing
}

// Ungrantable returns the capabilities the running kernel knows but this process's
// bounding set lacks: asked for, they make runc fail.
func Ungrantable() ([]string, error) {
	mask, err := BoundingSet()
	if err != nil {
		return nil, err
	}
	lastCap, err := LastCap()
	if err != nil {
		return nil, err
	}
	return Missing(mask, lastCap), nil
}

// BoundingSet reads the calling process's capability bounding set.
func BoundingSet() (uint64, error) {
	const path = "/proc/self/status"
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	mask, err := parseCapBnd(f)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	return mask, nil
}

// parseCapBnd reads the CapBnd line of a /proc/<pid>/status.
func parseCapBnd(r io.Reader) (uint64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapBnd:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				return 0, fmt.Errorf("parsing CapBnd %q: %w", v, err)
			}
			return mask, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("no CapBnd line")
}

// LastCap reads the number of the running kernel's highest capability.
func LastCap() (int, error) {
	const path = "/proc/sys/kernel/cap_last_cap"
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := parseLastCap(string(raw))
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	return n, nil
}

// parseLastCap reads the contents of /proc/sys/kernel/cap_last_cap.
func parseLastCap(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("parsing cap_last_cap %q: %w", s, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("cap_last_cap %d is negative", n)
	}
	return n, nil
}

// capabilitySets are the five lists of an OCI process's capabilities.
var capabilitySets = []string{"bounding", "effective", "inheritable", "permitted", "ambient"}

// FilterProcess removes drop from the capability lists of an OCI process object (the
// "process" of a bundle's config.json, or the file runc exec takes). Unknown fields are
// kept as they are.
func FilterProcess(process map[string]any, drop map[string]bool) {
	caps, ok := process["capabilities"].(map[string]any)
	if !ok {
		return
	}
	for _, set := range capabilitySets {
		list, ok := caps[set].([]any)
		if !ok {
			continue
		}
		kept := list[:0]
		for _, c := range list {
			if name, ok := c.(string); ok && drop[name] {
				continue
			}
			kept = append(kept, c)
		}
		caps[set] = kept
	}
}

// FilterFile rewrites an OCI JSON file in place. A bundle's config.json holds the process
// under "process"; runc exec's --process file is the process object itself.
func FilterFile(path string, drop map[string]bool, isBundleConfig bool) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	// Numbers are kept as their text: decoded as float64 they would lose precision, and
	// an rlimit of 18446744073709551615 written back as 18446744073709552000 is one runc
	// refuses.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("parsing %s: %w", path, err)
	}
	// Refuse trailing data as json.Unmarshal would, rather than drop it on rewriting.
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("parsing %s: data after the JSON object", path)
	}
	process := doc
	if isBundleConfig {
		p, ok := doc["process"].(map[string]any)
		if !ok {
			return nil
		}
		process = p
	}
	FilterProcess(process, drop)
	out, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, info.Mode().Perm())
}
