package argocd

import (
	"fmt"
	"io/fs"
	"path"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// testCase is one entry of a health_test.yaml: the object at InputPath (relative to the
// kind's directory) and the health Argo CD must give it.
type testCase struct {
	HealthStatus struct {
		Status  string `json:"status"`
		Message string `json:"message"`
	} `json:"healthStatus"`
	InputPath string `json:"inputPath"`
}

// testCases reads the health_test.yaml of a muster.dev kind.
func testCases(kind string) ([]testCase, error) {
	b, err := fs.ReadFile(customizations, path.Join(Group, kind, "health_test.yaml"))
	if err != nil {
		return nil, fmt.Errorf("reading the health tests of %s: %w", kind, err)
	}
	var file struct {
		Tests []testCase `json:"tests"`
	}
	if err := yaml.UnmarshalStrict(b, &file); err != nil {
		return nil, fmt.Errorf("decoding the health tests of %s: %w", kind, err)
	}
	return file.Tests, nil
}

// input reads a test case's object of a muster.dev kind, with numbers as the API
// server's JSON decodes them.
func input(kind, inputPath string) (*unstructured.Unstructured, error) {
	b, err := fs.ReadFile(customizations, path.Join(Group, kind, inputPath))
	if err != nil {
		return nil, fmt.Errorf("reading %s of %s: %w", inputPath, kind, err)
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return nil, fmt.Errorf("decoding %s of %s: %w", inputPath, kind, err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(j); err != nil {
		return nil, fmt.Errorf("decoding %s of %s: %w", inputPath, kind, err)
	}
	return obj, nil
}

// kinds lists the muster.dev kinds that have a health check.
func kinds() ([]string, error) {
	entries, err := fs.ReadDir(customizations, Group)
	if err != nil {
		return nil, fmt.Errorf("listing the health checks: %w", err)
	}
	var kinds []string
	for _, e := range entries {
		if e.IsDir() {
			kinds = append(kinds, e.Name())
		}
	}
	return kinds, nil
}
