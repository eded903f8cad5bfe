// Package runcargs reads a runc command line far enough to tell which file holds the OCI
// spec runc is about to apply, so that muster-runc can filter it before handing over. It
// reads arguments as runc's flag parser does (a flag is -name or --name, its value inline
// after '=' or as the next argument, "--" ends the flags) and knows only as many of runc's
// flags as it needs to find the subcommand and the spec file: anything it cannot place is
// left to runc, which reports its own error.
package runcargs

import (
	"path/filepath"
	"strings"
)

// Spec is a file runc reads an OCI spec from.
type Spec struct {
	Path string
	// BundleConfig is true for a bundle's config.json, which holds the process under
	// "process", and false for exec's --process file, which is the process object itself.
	BundleConfig bool
}

// globalValueFlags are runc's global flags that take a value; --criu was removed in runc
// 1.4 but older runcs (Debian's) still accept it. --rootless is a string flag in runc
// ("true", "false" or "auto"), so its value may be the next argument too.
var globalValueFlags = map[string]bool{"root": true, "log": true, "log-format": true, "criu": true, "rootless": true}

// globalBoolFlags are runc's global flags that take no value, or an inline =value only.
// --help and --version are not among them: with those runc runs no subcommand, so the line
// is left alone as one with an unknown flag is.
var globalBoolFlags = map[string]bool{"debug": true, "systemd-cgroup": true}

// execBoolFlags are the flags of runc exec that take no separate value. Every other flag
// of exec is read as taking one, so that its value is not mistaken for the container id:
// that is right for all of exec's other flags, and for flags runc adds later, most of
// which take values.
var execBoolFlags = map[string]bool{
	"tty": true, "t": true, "detach": true, "d": true, "no-new-privs": true,
	"ignore-paused": true,
	// runc built on urfave/cli v3 also takes its global flags after the subcommand.
	"debug": true, "systemd-cgroup": true,
}

// SpecFile returns the file holding the spec runc will apply for the command line args
// (os.Args[1:] of a runc), and false when the command applies none or the line cannot be
// read with certainty: create, run and restore read <bundle>/config.json (the bundle is
// the current directory unless --bundle/-b says otherwise), exec reads the file of
// --process/-p if given, and every other subcommand reads no spec.
func SpecFile(args []string) (Spec, bool) {
	sub, rest, ok := subcommand(args)
	if !ok {
		return Spec{}, false
	}
	switch sub {
	case "create", "run", "restore":
		bundle, ok := bundleDir(rest)
		if !ok {
			return Spec{}, false
		}
		// filepath.Join("", "config.json") is config.json in the current directory, as
		// runc reads it when no bundle is given.
		return Spec{Path: filepath.Join(bundle, "config.json"), BundleConfig: true}, true
	case "exec":
		process, ok := processFile(rest)
		if !ok {
			return Spec{}, false
		}
		return Spec{Path: process}, true
	}
	return Spec{}, false
}

// subcommand skips the global flags before runc's subcommand and returns it with the
// arguments after it. An unknown global flag or a missing value makes the line unreadable
// (runc refuses it anyway).
func subcommand(args []string) (sub string, rest []string, ok bool) {
	for i := 0; i < len(args); i++ {
		name, _, hasValue, kind := splitFlag(args[i])
		switch kind {
		case positional:
			return args[i], args[i+1:], true
		case terminator:
			if i+1 < len(args) {
				return args[i+1], args[i+2:], true
			}
			return "", nil, false
		case malformed:
			return "", nil, false
		}
		switch {
		case globalBoolFlags[name]:
		case globalValueFlags[name]:
			if !hasValue {
				if i+1 >= len(args) {
					return "", nil, false
				}
				i++
			}
		default:
			return "", nil, false
		}
	}
	return "", nil, false
}

// bundleDir returns the bundle of create, run or restore: the last --bundle/-b (as runc
// keeps the last value of a repeated flag), "" for the current directory when there is
// none. These commands take their flags anywhere before "--", also after the container id.
func bundleDir(args []string) (string, bool) {
	bundle := ""
	for i := 0; i < len(args); i++ {
		name, value, hasValue, kind := splitFlag(args[i])
		if kind == terminator {
			break
		}
		if kind == malformed {
			return "", false
		}
		if kind != flag {
			continue
		}
		if isHelp(name) {
			return "", false
		}
		if name != "bundle" && name != "b" {
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return "", false
			}
			i++
			value = args[i]
		}
		bundle = value
	}
	return bundle, true
}

// processFile returns the --process/-p file of exec; an empty one, as for runc, is none.
// exec stops reading flags at the container id, since what follows is the command to run,
// whose own flags (say `ps -p 1`) are not runc's.
func processFile(args []string) (string, bool) {
	process := ""
	for i := 0; i < len(args); i++ {
		name, value, hasValue, kind := splitFlag(args[i])
		if kind != flag {
			// The container id, "--", or something runc will refuse.
			break
		}
		if isHelp(name) {
			return "", false
		}
		if !hasValue && !execBoolFlags[name] {
			if i+1 >= len(args) {
				return "", false
			}
			i++
			value = args[i]
		}
		if name == "process" || name == "p" {
			process = value
		}
	}
	return process, process != ""
}

// isHelp tells a subcommand's --help/-h, with which runc prints help and applies no spec.
func isHelp(name string) bool {
	return name == "help" || name == "h"
}

// argKind is how runc's flag parser reads one argument.
type argKind int

const (
	flag       argKind = iota // -name, --name, -name=value, --name=value
	positional                // anything not starting with '-', and "-" alone
	terminator                // "--": no flags after it
	malformed                 // "---x", "-=x": runc refuses them
)

// splitFlag reads one argument as runc's flag parser does.
func splitFlag(arg string) (name, value string, hasValue bool, kind argKind) {
	if arg == "--" {
		return "", "", false, terminator
	}
	name, ok := strings.CutPrefix(arg, "-")
	if !ok || name == "" {
		return "", "", false, positional
	}
	name, _ = strings.CutPrefix(name, "-")
	name, value, hasValue = strings.Cut(name, "=")
	if name == "" || strings.HasPrefix(name, "-") {
		return "", "", false, malformed
	}
	return name, value, hasValue, flag
}
