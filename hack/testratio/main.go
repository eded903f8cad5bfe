// Command testratio prints, for each top-level package of Muster (agent, hub, api, cmd,
// internal, placement), the lines of its _test.go files divided by the lines of its other
// Go files: the "test ÷ code" figure that issue 27 asks to keep at or above 1.3.
//
// Counted: every line (comments included, blank lines not) of the Go files under the
// directory. Not counted: generated files (zz_generated*.go, and any file whose header says
// "Code generated ... DO NOT EDIT."), and internal/testing, which is test code itself (the
// envtest harness, the builders, the toolchain) and would otherwise count as code to be tested.
//
// Usage, from the repository root:
//
//	go run ./hack/testratio            # one line per top-level package
//	go run ./hack/testratio -packages  # and one line per Go package beneath them
package main

import (
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// topLevel are the directories the ratio is reported for, in the order printed.
var topLevel = []string{"agent", "hub", "api", "cmd", "internal", "placement"}

// excludedDirs are not counted at all: test code that lives outside _test.go files.
var excludedDirs = map[string]bool{
	filepath.Join("internal", "testing"): true,
}

// count is the lines of one directory's code and test files.
type count struct{ code, test int }

// ratio is test ÷ code; a directory without code has none.
func (c count) ratio() string {
	if c.code == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(c.test)/float64(c.code))
}

func main() {
	perPackage := flag.Bool("packages", false, "also print one line per Go package")
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	if err := run(os.Stdout, *root, *perPackage); err != nil {
		fmt.Fprintln(os.Stderr, "testratio:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, root string, perPackage bool) error {
	fmt.Fprintf(w, "%-40s %8s %8s %6s\n", "package", "code", "test", "ratio")
	for _, top := range topLevel {
		dirs, err := countTree(root, top)
		if err != nil {
			return err
		}
		var total count
		names := make([]string, 0, len(dirs))
		for dir, c := range dirs {
			total.code += c.code
			total.test += c.test
			names = append(names, dir)
		}
		fmt.Fprintf(w, "%-40s %8d %8d %6s\n", top, total.code, total.test, total.ratio())
		if !perPackage {
			continue
		}
		sort.Strings(names)
		for _, dir := range names {
			c := dirs[dir]
			fmt.Fprintf(w, "  %-38s %8d %8d %6s\n", dir, c.code, c.test, c.ratio())
		}
	}
	return nil
}

// countTree counts the Go files under root/top, per directory (relative to root).
func countTree(root, top string) (map[string]count, error) {
	dirs := map[string]count{}
	err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if excludedDirs[rel] || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasPrefix(d.Name(), "zz_generated") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if generated(string(data)) {
			return nil
		}
		c := dirs[filepath.Dir(rel)]
		n := lines(string(data))
		if strings.HasSuffix(path, "_test.go") {
			c.test += n
		} else {
			c.code += n
		}
		dirs[filepath.Dir(rel)] = c
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("counting %s: %w", top, err)
	}
	return dirs, nil
}

// generated reports whether a Go file carries the standard marker of generated code
// (https://go.dev/s/generatedcode), which must come before the package clause.
func generated(src string) bool {
	for _, line := range strings.Split(src, "\n") {
		if strings.HasPrefix(line, "package ") {
			return false
		}
		if strings.HasPrefix(line, "// Code generated ") && strings.HasSuffix(strings.TrimSpace(line), " DO NOT EDIT.") {
			return true
		}
	}
	return false
}

// lines counts the non-blank lines of src.
func lines(src string) int {
	n := 0
	for _, line := range strings.Split(src, "\n") {
		if strings.TrimSpace(line) != "" {
			n++
		}
	}
	return n
}
