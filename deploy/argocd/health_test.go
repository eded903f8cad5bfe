package argocd

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// withoutHealth are the muster.dev kinds that need no health check, and why.
var withoutHealth = map[string]string{
	"NodeSlice": "plain inventory data written whole by an agent: no spec, no status",
}

// TestEveryKindHasAHealthCheck fails when a kind is added to the API without a script (or
// an exemption above), so that Argo CD never shows a Muster kind without health.
func TestEveryKindHasAHealthCheck(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := musterv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	have, err := kinds()
	if err != nil {
		t.Fatal(err)
	}
	api := reflect.TypeFor[musterv1.FleetJob]().PkgPath()
	var want []string
	for kind, typ := range scheme.KnownTypes(musterv1.GroupVersion) {
		if typ.PkgPath() != api || strings.HasSuffix(kind, "List") {
			continue
		}
		if _, exempt := withoutHealth[kind]; !exempt {
			want = append(want, kind)
		}
	}
	slices.Sort(want)
	if !slices.Equal(have, want) {
		t.Errorf("health checks for %v, want one for every kind: %v", have, want)
	}
}

// TestHealthTests runs every case of every health_test.yaml, as Argo CD's own test of
// resource_customizations does.
func TestHealthTests(t *testing.T) {
	all, err := kinds()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range all {
		cases, err := testCases(kind)
		if err != nil {
			t.Error(err)
			continue
		}
		if len(cases) == 0 {
			t.Errorf("%s: health_test.yaml has no test", kind)
		}
		for _, tc := range cases {
			t.Run(kind+"/"+tc.InputPath, func(t *testing.T) {
				obj, err := input(kind, tc.InputPath)
				if err != nil {
					t.Fatal(err)
				}
				if obj.GetKind() != kind || obj.GroupVersionKind().Group != Group {
					t.Fatalf("%s is a %s, not a %s/%s", tc.InputPath, obj.GroupVersionKind(), Group, kind)
				}
				status, message, err := Health(obj)
				if err != nil {
					t.Fatal(err)
				}
				if status != tc.HealthStatus.Status || message != tc.HealthStatus.Message {
					t.Errorf("got %s %q, want %s %q", status, message, tc.HealthStatus.Status, tc.HealthStatus.Message)
				}
			})
		}
	}
}

// TestEveryStatusIsTested makes each script's health_test.yaml cover every status the
// script can return, so a branch cannot rot untested.
func TestEveryStatusIsTested(t *testing.T) {
	all, err := kinds()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range all {
		src, err := script(kind)
		if err != nil {
			t.Fatal(err)
		}
		cases, err := testCases(kind)
		if err != nil {
			t.Fatal(err)
		}
		for _, status := range []string{Healthy, Progressing, Degraded, Suspended, Missing} {
			returned := strings.Contains(src, `"`+status+`"`)
			tested := slices.ContainsFunc(cases, func(tc testCase) bool { return tc.HealthStatus.Status == status })
			if returned && !tested {
				t.Errorf("%s can be %s but no test expects it", kind, status)
			}
		}
	}
}

func TestHealthRefusesWhatItCannotJudge(t *testing.T) {
	pod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"}}}
	if _, _, err := Health(pod); !errors.Is(err, ErrNoScript) {
		t.Errorf("a Pod: %v, want ErrNoScript", err)
	}
	slice := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "muster.dev/v1alpha1", "kind": "NodeSlice", "metadata": map[string]any{"name": "s"}}}
	if _, _, err := Health(slice); !errors.Is(err, ErrNoScript) {
		t.Errorf("a NodeSlice: %v, want ErrNoScript", err)
	}
}

// TestRunIsArgoCDsSandbox checks the interpreter offers what Argo CD offers a configmap
// script and no more, and refuses results Argo CD would refuse.
func TestRunIsArgoCDsSandbox(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "x", "generation": int64(3)},
		"status":   map[string]any{"items": []any{"a", "b"}, "ratio": 0.5, "ok": true},
	}}
	for _, tc := range []struct {
		name, script, status, message, err string
	}{
		{name: "numbers, arrays and booleans", status: Healthy, message: "3 2 b 0.5 true",
			script: `return {status = "Healthy", message = obj.metadata.generation .. " " .. #obj.status.items .. " " .. obj.status.items[2] .. " " .. obj.status.ratio .. " " .. tostring(obj.status.ok)}`},
		{name: "table library", status: Progressing, message: "a,b",
			script: `return {status = "Progressing", message = table.concat(obj.status.items, ",")}`},
		{name: "no message", status: Suspended, script: `return {status = "Suspended"}`},
		{name: "no os", script: `os.execute("true") return {status = "Healthy"}`, err: "non-table object(nil) with key 'execute'"},
		{name: "no io", script: `io.open("/etc/passwd") return {status = "Healthy"}`, err: "non-table object(nil) with key 'open'"},
		{name: "no string library", script: `return {status = string.upper("healthy")}`, err: "non-table object(nil) with key 'upper'"},
		{name: "no dofile", script: `dofile("/etc/passwd") return {status = "Healthy"}`, err: "attempt to call a non-function object"},
		{name: "unknown status", script: `return {status = "Fine"}`, err: `status "Fine"`},
		{name: "not a table", script: `return "Healthy"`, err: "not a table"},
		{name: "endless", script: `while true do end`, err: "context deadline exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, message, err := run(tc.script, obj)
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error %v, want one mentioning %q", err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case status != tc.status || message != tc.message:
				t.Errorf("got %s %q, want %s %q", status, message, tc.status, tc.message)
			}
		})
	}
}
