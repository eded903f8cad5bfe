package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFilterArgs(t *testing.T) {
	const (
		bundleConfig = `{"process":{"capabilities":{"bounding":["CAP_KILL","CAP_SYS_RESOURCE"]}}}`
		bundleWant   = `{"process":{"capabilities":{"bounding":["CAP_KILL"]}}}`
		process      = `{"capabilities":{"bounding":["CAP_SYS_RESOURCE","CAP_KILL"]}}`
		processWant  = `{"capabilities":{"bounding":["CAP_KILL"]}}`
	)
	drop := func() (map[string]bool, error) { return map[string]bool{"CAP_SYS_RESOURCE": true}, nil }
	for _, tc := range []struct {
		args string
		// filtered names the one file of the working directory expected rewritten.
		filtered string
	}{
		{"--root /r --log-format json create --bundle b c1", "b/config.json"},
		{"run -b=b c1", "b/config.json"},
		{"create c1", "config.json"},
		{"exec -p process.json c1", "process.json"},
		{"exec c1 sh", ""},
		{"exec c1 ps -p process.json", ""},
		{"spec -b b", ""},
		{"create --bundle", ""},
		{"state c1", ""},
		// A bundle without config.json is for runc to report.
		{"create -b nowhere c1", ""},
	} {
		dir := t.TempDir()
		t.Chdir(dir)
		files := map[string]string{"config.json": bundleConfig, "b/config.json": bundleConfig, "process.json": process}
		for name, doc := range files {
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := filterArgs(strings.Fields(tc.args), drop); err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		for name, doc := range files {
			want := doc
			if name == tc.filtered {
				want = map[string]string{bundleConfig: bundleWant, process: processWant}[doc]
			}
			if got, _ := os.ReadFile(name); string(got) != want {
				t.Errorf("%q: %s is %s, want %s", tc.args, name, got, want)
			}
		}
	}
}

func TestFilterArgsReadsCapsOnlyForASpec(t *testing.T) {
	for _, args := range []string{"state c1", "kill c1 KILL", "delete c1", "features"} {
		called := false
		drop := func() (map[string]bool, error) { called = true; return nil, nil }
		if err := filterArgs(strings.Fields(args), drop); err != nil || called {
			t.Errorf("%q: error %v, capabilities read: %v", args, err, called)
		}
	}
}
