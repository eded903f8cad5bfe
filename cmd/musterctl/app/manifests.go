package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// fieldManager owns everything musterctl applies.
const fieldManager = "musterctl"

// apply server-side-applies objs in order, taking ownership of every field they set.
func apply(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	for _, u := range objs {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}

// printObjects writes objs as a YAML stream (one document each, in order) or as a JSON
// List, what a dry run shows of what it would apply.
func printObjects(w io.Writer, objs []*unstructured.Unstructured, format string) error {
	switch format {
	case "yaml":
		for i, u := range objs {
			raw, err := yaml.Marshal(u.Object)
			if err != nil {
				return err
			}
			if i > 0 {
				if _, err := io.WriteString(w, "---\n"); err != nil {
					return err
				}
			}
			if _, err := w.Write(raw); err != nil {
				return err
			}
		}
		return nil
	case "json":
		list := map[string]any{"apiVersion": "v1", "kind": "List", "items": objs}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	return fmt.Errorf("--output %q: must be yaml or json", format)
}
