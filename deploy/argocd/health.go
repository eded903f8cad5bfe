// Package argocd holds Argo CD health checks for Muster's kinds, in the layout of Argo
// CD's resource_customizations directory (muster.dev/<Kind>/health.lua with its
// health_test.yaml and testdata), and runs them the way Argo CD does, so that the tests
// here and in the e2e suites judge the scripts Argo CD will run.
package argocd

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"time"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Group is the API group whose kinds have health checks here.
const Group = "muster.dev"

// The health statuses a script may return: Argo CD's, without Unknown, which Argo CD
// itself reports when a script fails.
const (
	Healthy     = "Healthy"
	Progressing = "Progressing"
	Degraded    = "Degraded"
	Suspended   = "Suspended"
	Missing     = "Missing"
)

// scriptTimeout bounds one run, as Argo CD bounds its own.
const scriptTimeout = time.Second

// customizations holds muster.dev/<Kind>/health.lua, health_test.yaml and testdata/.
//
//go:embed muster.dev
var customizations embed.FS

// ErrNoScript is returned for an object whose kind has no health check.
var ErrNoScript = errors.New("no health check")

// script returns the health.lua of a muster.dev kind.
func script(kind string) (string, error) {
	b, err := customizations.ReadFile(path.Join(Group, kind, "health.lua"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w for %s/%s", ErrNoScript, Group, kind)
	}
	if err != nil {
		return "", fmt.Errorf("reading the health check of %s/%s: %w", Group, kind, err)
	}
	return string(b), nil
}

// Health runs the health check of obj's kind and returns the status and message it
// gives, as Argo CD would show them.
func Health(obj *unstructured.Unstructured) (status, message string, err error) {
	gvk := obj.GroupVersionKind()
	if gvk.Group != Group {
		return "", "", fmt.Errorf("%w for group %q: only %s kinds have one", ErrNoScript, gvk.Group, Group)
	}
	src, err := script(gvk.Kind)
	if err != nil {
		return "", "", err
	}
	return run(src, obj)
}

// run runs a health script against obj in an interpreter set up as Argo CD sets up its
// own for argocd-cm customizations: the object as the global obj, only the base and table
// libraries, a time limit. Base's file loaders are removed too, so a script reads nothing
// but obj.
func run(script string, obj *unstructured.Unstructured) (status, message string, err error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), Protect: true}, lua.LString(lib.name)); err != nil {
			return "", "", fmt.Errorf("opening the Lua %q library: %w", lib.name, err)
		}
	}
	for _, unsafe := range []string{"dofile", "loadfile"} {
		l.SetGlobal(unsafe, lua.LNil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), scriptTimeout)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", toLua(l, obj.Object))
	if err := l.DoString(script); err != nil {
		return "", "", fmt.Errorf("running the health check of %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return result(l.Get(-1))
}

// result reads the table a script returns: {status = ..., message = ...}.
func result(v lua.LValue) (status, message string, err error) {
	hs, ok := v.(*lua.LTable)
	if !ok {
		return "", "", fmt.Errorf("the health check returned a %s, not a table", v.Type())
	}
	s, ok := hs.RawGetString("status").(lua.LString)
	if !ok {
		return "", "", fmt.Errorf("the health check returned no status string")
	}
	switch string(s) {
	case Healthy, Progressing, Degraded, Suspended, Missing:
	default:
		return "", "", fmt.Errorf("the health check returned status %q, which Argo CD does not know", s)
	}
	switch m := hs.RawGetString("message").(type) {
	case lua.LString:
		message = string(m)
	case *lua.LNilType:
	default:
		return "", "", fmt.Errorf("the health check returned a %s message, not a string", m.Type())
	}
	return string(s), message, nil
}

// toLua converts a decoded JSON value into Lua as Argo CD does: objects become tables,
// arrays 1-based tables, numbers numbers.
func toLua(l *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(x)
	case string:
		return lua.LString(x)
	case json.Number:
		return lua.LString(x)
	case int64:
		return lua.LNumber(x)
	case int32:
		return lua.LNumber(x)
	case int:
		return lua.LNumber(x)
	case float64:
		return lua.LNumber(x)
	case []any:
		t := l.CreateTable(len(x), 0)
		for _, item := range x {
			t.Append(toLua(l, item))
		}
		return t
	case map[string]any:
		t := l.CreateTable(0, len(x))
		for k, item := range x {
			t.RawSetString(k, toLua(l, item))
		}
		return t
	}
	return lua.LNil
}
