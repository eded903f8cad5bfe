// Command muster-runc is an OCI runtime that Docker can be given as its default runtime on
// hosts whose capability bounding set lacks capabilities Docker grants privileged
// containers (see package capfilter). It removes those capabilities from the spec runc is
// about to apply, for containers it creates and processes it executes in them, then runs
// runc with the arguments it was given.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/musterhq/muster/e2e/engine/capfilter"
)

// realRuncEnv names the runc to hand over to; Debian's docker.io puts it in /usr/sbin.
const realRuncEnv = "MUSTER_RUNC"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "muster-runc:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	mask, err := capfilter.BoundingSet()
	if err != nil {
		return err
	}
	drop := map[string]bool{}
	for _, c := range capfilter.Missing(mask) {
		drop[c] = true
	}
	if len(drop) > 0 {
		if err := filterArgs(args, drop); err != nil {
			return err
		}
	}
	runc := os.Getenv(realRuncEnv)
	if runc == "" {
		if runc, err = exec.LookPath("runc"); err != nil {
			return err
		}
	}
	return syscall.Exec(runc, append([]string{runc}, args...), os.Environ())
}

// filterArgs finds the spec files in runc's command line: the bundle of create and run
// (config.json inside it) and the --process file of exec.
func filterArgs(args []string, drop map[string]bool) error {
	for i := 0; i < len(args); i++ {
		flag, value, hasValue := splitFlag(args[i])
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
		}
		switch flag {
		case "--bundle", "-b":
			if err := capfilter.FilterFile(filepath.Join(value, "config.json"), drop, true); err != nil {
				return err
			}
		case "--process", "-p":
			if err := capfilter.FilterFile(value, drop, false); err != nil {
				return err
			}
		}
	}
	return nil
}

func splitFlag(arg string) (flag, value string, hasValue bool) {
	for i := 0; i < len(arg); i++ {
		if arg[i] == '=' {
			return arg[:i], arg[i+1:], true
		}
	}
	return arg, "", false
}
