package app

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// musterctl's own aliases resolve wherever kubectl-style arguments name kinds: alone, in
// a comma list and before a slash; other names are left for the API server's discovery.
func TestExpandKinds(t *testing.T) {
	for in, want := range map[string]string{
		"cluster":          "memberclusters.muster.dev",
		"clusters":         "memberclusters.muster.dev",
		"Clusters":         "memberclusters.muster.dev",
		"clusters/eu-1":    "memberclusters.muster.dev/eu-1",
		"fj,clusters":      "fj,memberclusters.muster.dev",
		"fj":               "fj",
		"fj/cluster":       "fj/cluster", // a FleetJob named cluster stays one
		"mc":               "mc",
		"":                 "",
		"clusters/":        "memberclusters.muster.dev/",
		"bcj,cluster,fcj":  "bcj,memberclusters.muster.dev,fcj",
		"clusters/a/b":     "memberclusters.muster.dev/a/b",
		"deployments.apps": "deployments.apps",
	} {
		if got := expandKinds(in); got != want {
			t.Errorf("expandKinds(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExpandArgs(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"clusters"}, []string{"memberclusters.muster.dev"}},
		// A cluster named "cluster" is a name, not a kind, after the first argument.
		{[]string{"clusters", "cluster", "eu-1"}, []string{"memberclusters.muster.dev", "cluster", "eu-1"}},
		{[]string{"fj/a", "clusters/eu-1"}, []string{"fj/a", "memberclusters.muster.dev/eu-1"}},
		{[]string{}, []string{}},
	} {
		if got := expandArgs(tc.in); !cmp.Equal(got, tc.want) {
			t.Errorf("expandArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestErrNoKindListsMustersKinds(t *testing.T) {
	msg := errNoKind("frob").Error()
	if !strings.HasPrefix(msg, "you must specify the type of resource to frob; Muster's kinds are:\n") {
		t.Errorf("errNoKind = %q", msg)
	}
	for _, k := range []string{"fleetjobs (fj)", "broadcastjobs (bcj)", "fleetcronjobs (fcj)", "workloadspreads (wrs)", "memberclusters (clusters, mc)", "works", "nodeslices (nsl)"} {
		if !strings.Contains(msg, k) {
			t.Errorf("errNoKind does not list %s:\n%s", k, msg)
		}
	}
}

// Errors print as kubectl prints them: the API server's refusals with their reason, the
// rest after "error: ", each error of an aggregate on its own line.
func TestPrintError(t *testing.T) {
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: "muster.dev", Resource: "fleetjobs"}, "render")
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "x", errors.New("no"))
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"plain", errors.New("--ttl 0s: a token must live for some time"), "error: --ttl 0s: a token must live for some time\n"},
		{"wrapped plain", fmt.Errorf("loading kubeconfig: %w", errors.New("no such file")), "error: loading kubeconfig: no such file\n"},
		{"not found", notFound, `Error from server (NotFound): fleetjobs.muster.dev "render" not found` + "\n"},
		{"forbidden", forbidden, `Error from server (Forbidden): secrets "x" is forbidden: no` + "\n"},
		{"aggregate", utilerrors.NewAggregate([]error{notFound, errors.New("second")}),
			`Error from server (NotFound): fleetjobs.muster.dev "render" not found` + "\nerror: second\n"},
		{"message ending in a newline", errors.New("two\nlines\n"), "error: two\nlines\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			printError(&out, tc.err)
			if out.String() != tc.want {
				t.Errorf("printError =\n%q\nwant\n%q", out.String(), tc.want)
			}
		})
	}
}

func TestFormatHelpers(t *testing.T) {
	three := int32(3)
	checks := []struct{ got, want string }{
		{count(nil), "-"},
		{count(&three), "3"},
		{fmt.Sprint(ptrOr(nil)), "0"},
		{fmt.Sprint(ptrOr(&three)), "3"},
		{orPending(""), "Pending"},
		{orPending("Running"), "Running"},
		{phaseOrPending(""), "Pending"},
		{phaseOrPending(musterv1.BroadcastJobRunning), "Running"},
		{orDash(""), "-"},
		{orDash("x"), "x"},
		{orNone(""), "<none>"},
		{orNone("<none>"), "<none>"},
		{orNone("a=b"), "a=b"},
		{joinComma(nil), ""},
		{joinComma([]string{"a", "b"}), "a, b"},
	}
	for i, c := range checks {
		if c.got != c.want {
			t.Errorf("check %d: got %q, want %q", i, c.got, c.want)
		}
	}
}

func TestNoResourcesMessage(t *testing.T) {
	if got := noResourcesMessage("batch", false); got != "No resources found in batch namespace." {
		t.Errorf("one namespace: %q", got)
	}
	if got := noResourcesMessage("batch", true); got != "No resources found" {
		t.Errorf("every namespace: %q", got)
	}
}

func table(rows ...any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "meta.k8s.io/v1", "kind": "Table", "rows": rows,
		"columnDefinitions": []any{map[string]any{"name": "Name", "type": "string"}},
	}}
}

func TestCountRows(t *testing.T) {
	row := func(name string) any { return map[string]any{"cells": []any{name}} }
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	list.Items = []unstructured.Unstructured{{}, {}, {}}
	one := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "muster.dev/v1alpha1", "kind": "FleetJob"}}
	for _, tc := range []struct {
		name  string
		infos []*resource.Info
		want  int
	}{
		{"nothing", nil, 0},
		{"an empty table", []*resource.Info{{Object: table()}}, 0},
		{"two tables", []*resource.Info{{Object: table(row("a"), row("b"))}, {Object: table(row("c"))}}, 3},
		{"a list", []*resource.Info{{Object: list}}, 3},
		{"objects", []*resource.Info{{Object: one}, {Object: one}}, 2},
	} {
		if got := countRows(tc.infos); got != tc.want {
			t.Errorf("%s: countRows = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestDecodeTable(t *testing.T) {
	row := map[string]any{"cells": []any{"render"}, "object": map[string]any{
		"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": map[string]any{"name": "render", "namespace": "batch"},
	}}
	got, err := decodeTable(table(row))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rows) != 1 || len(got.ColumnDefinitions) != 1 || got.ColumnDefinitions[0].Name != "Name" {
		t.Fatalf("decoded table %+v", got)
	}
	u, ok := got.Rows[0].Object.Object.(*unstructured.Unstructured)
	if !ok || u.GetName() != "render" || u.GetNamespace() != "batch" {
		t.Errorf("row object %#v, want render in batch decoded", got.Rows[0].Object.Object)
	}

	notTable := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "muster.dev/v1alpha1", "kind": "FleetJob"}}
	if _, err := decodeTable(notTable); err == nil || err.Error() != "the server sent muster.dev/v1alpha1, Kind=FleetJob where a Table was asked for" {
		t.Errorf("decodeTable(FleetJob) error = %v", err)
	}
	if _, err := decodeTable(&metav1.Table{}); err == nil {
		t.Error("decodeTable of a typed object that is not unstructured succeeded")
	}
	badRow := table(map[string]any{"cells": []any{"x"}, "object": map[string]any{"metadata": "not a map"}})
	if _, err := decodeTable(badRow); err == nil || !strings.Contains(err.Error(), "decoding a row of the server's table") {
		t.Errorf("decodeTable of a bad row: %v", err)
	}
}

// Human output asks the API server for its Table (falling back to the object), with the
// whole objects only when watch needs to decide on them; other formats ask for objects.
func TestTableRequest(t *testing.T) {
	type seen struct{ accept, include string }
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.Header.Get("Accept"), r.URL.Query().Get("includeObject")}
		_, _ = w.Write([]byte("{}"))
	}))
	t.Cleanup(srv.Close)
	const asTable = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
	for _, tc := range []struct {
		name               string
		human, withObjects bool
		want               seen
	}{
		{"yaml or json", false, false, seen{"plain", ""}},
		{"table", true, false, seen{asTable, "Metadata"}},
		{"table for a watch that decides", true, true, seen{asTable, "Object"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := rest.RESTClientFor(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{
				GroupVersion: &schema.GroupVersion{Version: "v1"}, NegotiatedSerializer: scheme.Codecs.WithoutConversion(),
			}})
			if err != nil {
				t.Fatal(err)
			}
			req := c.Get().AbsPath("/x").SetHeader("Accept", "plain")
			tableRequest(tc.human, tc.withObjects)(req)
			if err := req.Do(t.Context()).Error(); err != nil {
				t.Fatal(err)
			}
			if s := <-got; s != tc.want {
				t.Errorf("request sent Accept %q, includeObject %q; want %q, %q", s.accept, s.include, tc.want.accept, tc.want.include)
			}
		})
	}
}

func TestCADataPrefersInlineData(t *testing.T) {
	if got, err := caData(&rest.Config{Host: "h", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("pem"), CAFile: "/nonexistent"}}); err != nil || string(got) != "pem" {
		t.Errorf("inline CA: %q, %v", got, err)
	}
	if _, err := caData(&rest.Config{Host: "https://hub:6443"}); err == nil || err.Error() != "the kubeconfig has no certificate authority for https://hub:6443" {
		t.Errorf("no CA: %v", err)
	}
	if _, err := caData(&rest.Config{Host: "h", TLSClientConfig: rest.TLSClientConfig{CAFile: "/nonexistent/ca.crt"}}); err == nil || !strings.Contains(err.Error(), "/nonexistent/ca.crt") {
		t.Errorf("missing CA file: %v", err)
	}
}

func TestVersionFallsBackToDevel(t *testing.T) {
	saved := version
	t.Cleanup(func() { version = saved })
	version = ""
	if got := Version(); got != "devel" {
		t.Errorf("unstamped test binary: Version = %q, want devel", got)
	}
	version = "v0.9.1"
	if got := Version(); got != "v0.9.1" {
		t.Errorf("stamped: Version = %q", got)
	}
}

// An image reference becomes the charts' repository and tag, or repository and digest; a
// registry's port is not a tag.
func TestImageValues(t *testing.T) {
	for _, tc := range []struct {
		ref  string
		want map[string]any
	}{
		{"muster-hub:v0.2.0", map[string]any{"repository": "muster-hub", "tag": "v0.2.0"}},
		{"registry.example:5000/muster/muster-hub:v1", map[string]any{"repository": "registry.example:5000/muster/muster-hub", "tag": "v1"}},
		{"registry.example:5000/muster-hub", map[string]any{"repository": "registry.example:5000/muster-hub", "tag": "latest"}},
		{"muster-hub", map[string]any{"repository": "muster-hub", "tag": "latest"}},
		{"muster-hub@sha256:abc", map[string]any{"repository": "muster-hub", "digest": "sha256:abc"}},
		{"muster-hub:v1@sha256:abc", map[string]any{"repository": "muster-hub:v1", "digest": "sha256:abc"}},
	} {
		if got := imageValues(tc.ref); !cmp.Equal(got, tc.want) {
			t.Errorf("imageValues(%q) = %v, want %v", tc.ref, got, tc.want)
		}
	}
}
