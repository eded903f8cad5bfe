package v1alpha1_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/musterhq/muster/internal/testing/envtest"
)

// TestCRDSizes applies every CRD server-side, as `musterctl init` and `musterctl join` do,
// and checks that the stored object, with its managed fields, stays under half of etcd's
// default 1.5 MiB request limit, so that descriptions added later cannot silently break
// installation.
func TestCRDSizes(t *testing.T) {
	const budget = 1536 * 1024 / 2
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "deploy", "crd", "*.yaml"))
	if err != nil || len(files) != 7 {
		t.Fatalf("%d CRD files (%v), want 7", len(files), err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		size, err := applyAndMeasure(t, raw)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(f), err)
		}
		t.Logf("%s: %d bytes in the file, %d bytes stored (JSON, with managed fields)", filepath.Base(f), len(raw), size)
		if size > budget {
			t.Errorf("%s: %d bytes stored, over the budget of %d", filepath.Base(f), size, budget)
		}
	}
}

// applyAndMeasure server-side applies the CRD manifest raw and returns the size of the
// stored object as the API server returns it in JSON, managed fields included.
func applyAndMeasure(t *testing.T, raw []byte) (int, error) {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &u.Object); err != nil {
		return 0, err
	}
	if err := env.Client.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("musterctl"), client.ForceOwnership); err != nil {
		return 0, fmt.Errorf("server-side apply: %w", err)
	}
	body, err := apiGet(t, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+u.GetName(), "application/json")
	return len(body), err
}

// apiGet reads path (with its query) from the test's API server with the given Accept header.
func apiGet(t *testing.T, path, accept string) ([]byte, error) {
	t.Helper()
	hc, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		return nil, err
	}
	base, _, err := rest.DefaultServerUrlFor(env.Config)
	if err != nil {
		return nil, err
	}
	u := *base
	u.Path, u.RawQuery, _ = strings.Cut(strings.TrimSuffix(u.Path, "/")+path, "?")
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", path, resp.Status, body)
	}
	return body, nil
}
