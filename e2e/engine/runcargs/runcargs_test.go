package runcargs

import (
	"strings"
	"testing"
)

func TestSpecFile(t *testing.T) {
	bundle := func(path string) *Spec { return &Spec{Path: path, BundleConfig: true} }
	process := func(path string) *Spec { return &Spec{Path: path} }
	for _, tc := range []struct {
		args string
		want *Spec // nil: runc is left alone
	}{
		// The line containerd's shim runs for dockerd's containers.
		{"--root /run/docker/runtime-runc/moby --log /run/x/log.json --log-format json --systemd-cgroup create --bundle /b --pid-file /b/init.pid c1", bundle("/b/config.json")},

		// Every form of --bundle, for each subcommand that reads a bundle.
		{"create --bundle /b c1", bundle("/b/config.json")},
		{"create --bundle=/b c1", bundle("/b/config.json")},
		{"create -bundle /b c1", bundle("/b/config.json")},
		{"create -bundle=/b c1", bundle("/b/config.json")},
		{"create -b /b c1", bundle("/b/config.json")},
		{"create -b=/b c1", bundle("/b/config.json")},
		{"create --b /b c1", bundle("/b/config.json")},
		{"run -b rel c1", bundle("rel/config.json")},
		{"restore --image-path /img -b /b c1", bundle("/b/config.json")},
		{"create c1 --bundle /b", bundle("/b/config.json")},
		{"create -b /a -b /b c1", bundle("/b/config.json")},
		{"create c1 -- -b /b", bundle("config.json")},

		// No bundle, or an empty one: runc reads config.json in its current directory.
		{"create c1", bundle("config.json")},
		{"run --detach c1", bundle("config.json")},
		{"create --bundle= c1", bundle("config.json")},

		// Every form of the global flags before the subcommand.
		{"--root /r create -b /b c1", bundle("/b/config.json")},
		{"--root=/r create -b /b c1", bundle("/b/config.json")},
		{"-root /r create -b /b c1", bundle("/b/config.json")},
		{"-root=/r create -b /b c1", bundle("/b/config.json")},
		{"--log /l --log-format text --criu /usr/sbin/criu create -b /b c1", bundle("/b/config.json")},
		{"--debug --systemd-cgroup=true --rootless=false create -b /b c1", bundle("/b/config.json")},
		{"-debug=false create -b /b c1", bundle("/b/config.json")},
		{"--rootless true create -b /b c1", bundle("/b/config.json")},
		{"--root /r -- create -b /b c1", bundle("/b/config.json")},

		// exec: the --process file in every form; flags stop at the container id.
		{"exec --process /p.json c1", process("/p.json")},
		{"exec --process=/p.json c1", process("/p.json")},
		{"exec -process /p.json c1", process("/p.json")},
		{"exec -process=/p.json c1", process("/p.json")},
		{"exec -p /p.json c1", process("/p.json")},
		{"exec -p=/p.json c1", process("/p.json")},
		{"--root /r exec --tty -d --pid-file /pid --console-socket /s -p /p.json c1", process("/p.json")},
		{"exec --cwd /x -e A=1 -p /p.json c1", process("/p.json")},
		{"exec -p /p.json -- c1", process("/p.json")},
		{"exec c1 ps -p 1", nil},
		{"exec --cwd /x c1 grep -p y", nil},
		{"exec -t c1 sh", nil},
		{"exec -p= c1 sh", nil},

		// Subcommands that apply no spec, whatever flags they are given.
		{"spec -b /b", nil},
		{"spec --bundle=/b --rootless", nil},
		{"--root /r state c1", nil},
		{"start c1", nil},
		{"kill c1 KILL", nil},
		{"delete --force c1", nil},
		{"features", nil},
		{"checkpoint --image-path /img c1", nil},

		// A flag without its value: runc refuses the line; nothing is read, above all not
		// ./config.json.
		{"create --bundle", nil},
		{"create c1 -b", nil},
		{"run -b", nil},
		{"exec -p", nil},
		{"exec --cwd", nil},
		{"--root", nil},
		{"--root create -b /b c1", nil},
		{"--log-format", nil},

		// Lines runc does not run a subcommand for, or refuses.
		{"", nil},
		{"--debug", nil},
		{"--", nil},
		{"--help create -b /b", nil},
		{"--version", nil},
		{"--no-such-flag create -b /b c1", nil},
		{"---root /r create -b /b c1", nil},
		{"create ---b /b c1", nil},
		{"create -h", nil},
		{"exec --help -p /p.json c1", nil},
	} {
		got, ok := SpecFile(strings.Fields(tc.args))
		switch {
		case tc.want == nil && ok:
			t.Errorf("SpecFile(%q) = %+v, want none", tc.args, got)
		case tc.want != nil && !ok:
			t.Errorf("SpecFile(%q) = none, want %+v", tc.args, *tc.want)
		case tc.want != nil && got != *tc.want:
			t.Errorf("SpecFile(%q) = %+v, want %+v", tc.args, got, *tc.want)
		}
	}
}

func TestSplitFlag(t *testing.T) {
	for _, tc := range []struct {
		arg, name, value string
		hasValue         bool
		kind             argKind
	}{
		{"create", "", "", false, positional},
		{"-", "", "", false, positional},
		{"--", "", "", false, terminator},
		{"-b", "b", "", false, flag},
		{"--bundle", "bundle", "", false, flag},
		{"-bundle=/b", "bundle", "/b", true, flag},
		{"--bundle=", "bundle", "", true, flag},
		{"--env=A=1", "env", "A=1", true, flag},
		{"---b", "", "", false, malformed},
		{"-=x", "", "", false, malformed},
		{"--=x", "", "", false, malformed},
	} {
		name, value, hasValue, kind := splitFlag(tc.arg)
		if name != tc.name || value != tc.value || hasValue != tc.hasValue || kind != tc.kind {
			t.Errorf("splitFlag(%q) = %q, %q, %v, %v; want %q, %q, %v, %v", tc.arg, name, value, hasValue, kind, tc.name, tc.value, tc.hasValue, tc.kind)
		}
	}
}
