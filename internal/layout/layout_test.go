package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/musterhq/muster/"

// listed is what the test reads of `go list -json`.
type listed struct {
	ImportPath, Name, Dir string
	GoFiles, Imports      []string
}

// TestNoPackageImportsAControllerPackage: only the binaries' wiring imports a controller.
//
// A controller package is a package under hub/ or agent/, other than the roots hub and
// agent (which set up the binaries' managers), whose non-test files declare a method named
// SetupWithManager (it registers a controller) or Start (a manager.Runnable, such as the
// agent's heartbeat, event relay or certificate rotator). Only hub, agent, package main,
// the scale harness's simulated agents (e2e/fleetsim, which wire the agent's own
// registration, heartbeat and inventory code for members without API servers, as package
// agent wires them for real ones) and the package's own tests may import one; anything
// else that both sides, the webhook or musterctl need lives in api/ (pure rules) or
// internal/ (shared writes). Tests are not checked: `go list` without -test reports the
// imports of non-test files only.
func TestNoPackageImportsAControllerPackage(t *testing.T) {
	pkgs := goList(t)
	controllers := map[string]bool{}
	for _, p := range pkgs {
		if isController(t, p) {
			controllers[p.ImportPath] = true
		}
	}
	if len(controllers) == 0 {
		t.Fatal("found no controller package: the definition no longer matches the tree")
	}
	for _, p := range pkgs {
		if p.Name == "main" || wiring[strings.TrimPrefix(p.ImportPath, module)] {
			continue
		}
		for _, imp := range p.Imports {
			if controllers[imp] {
				t.Errorf("%s imports controller package %s: move what it needs into api/ or internal/",
					strings.TrimPrefix(p.ImportPath, module), strings.TrimPrefix(imp, module))
			}
		}
	}
}

// wiring are the packages besides package main that put controllers together.
var wiring = map[string]bool{"hub": true, "agent": true, "e2e/fleetsim": true}

// goList lists every package of the module.
func goList(t *testing.T) []listed {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Name,Dir,GoFiles,Imports", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("go list: %v: %s", err, exit.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listed
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs
		} else if err != nil {
			t.Fatalf("decoding go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
}

// isController says whether p is a controller package (see the test's comment).
func isController(t *testing.T, p listed) bool {
	t.Helper()
	rel := strings.TrimPrefix(p.ImportPath, module)
	if !strings.HasPrefix(rel, "hub/") && !strings.HasPrefix(rel, "agent/") {
		return false
	}
	fset := token.NewFileSet()
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parsing %s: %v", name, err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if ok && fn.Recv != nil && (fn.Name.Name == "SetupWithManager" || fn.Name.Name == "Start") {
				return true
			}
		}
	}
	return false
}
