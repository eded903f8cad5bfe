// Command muster-runc is an OCI runtime that Docker can be given as its default runtime on
// hosts whose capability bounding set lacks capabilities Docker grants privileged
// containers (see package capfilter). It removes those capabilities from the spec runc is
// about to apply, for containers it creates and processes it executes in them, then runs
// runc with the arguments it was given.
package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"syscall"

	"github.com/musterhq/muster/e2e/engine/capfilter"
	"github.com/musterhq/muster/e2e/engine/runcargs"
)

// realRuncEnv names the runc to hand over to; when it is unset, the first "runc" in PATH
// is used.
const realRuncEnv = "MUSTER_RUNC"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "muster-runc:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if err := filterArgs(args, ungrantable); err != nil {
		return err
	}
	runc := os.Getenv(realRuncEnv)
	if runc == "" {
		var err error
		if runc, err = exec.LookPath("runc"); err != nil {
			return err
		}
	}
	return syscall.Exec(runc, append([]string{runc}, args...), os.Environ())
}

// ungrantable returns capfilter.Ungrantable as the set filterArgs drops.
func ungrantable() (map[string]bool, error) {
	missing, err := capfilter.Ungrantable()
	if err != nil {
		return nil, err
	}
	drop := map[string]bool{}
	for _, c := range missing {
		drop[c] = true
	}
	return drop, nil
}

// filterArgs removes the capabilities drop returns from the spec file of runc's command
// line args, if it has one; drop is called only then, so that runc's other commands (state,
// kill, delete, ...) are handed over without reading /proc. A spec file that does not exist
// is left for runc to report, in its own words and log, as it would without this wrapper.
func filterArgs(args []string, drop func() (map[string]bool, error)) error {
	spec, ok := runcargs.SpecFile(args)
	if !ok {
		return nil
	}
	caps, err := drop()
	if err != nil {
		return err
	}
	if len(caps) == 0 {
		return nil
	}
	err = capfilter.FilterFile(spec.Path, caps, spec.BundleConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
