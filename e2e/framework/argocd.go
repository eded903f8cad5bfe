package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	"github.com/musterhq/muster/deploy/argocd"
)

// CaptureArgoCDTestdataEnv names a directory where ArgoCDHealth writes every object it
// judges, as <dir>/<Kind>/testdata/<file>.yaml, so that deploy/argocd's testdata can be
// refreshed from objects the controllers really wrote.
const CaptureArgoCDTestdataEnv = "MUSTER_CAPTURE_ARGOCD_TESTDATA"

// ArgoCDHealth reads obj's current state from c as Argo CD reads it (unstructured, as the
// API server serves it), runs the kind's Argo CD health check from deploy/argocd on it and
// returns the status and message Argo CD would show. file names the object in a capture
// (see CaptureArgoCDTestdataEnv).
func ArgoCDHealth(ctx context.Context, c *Cluster, obj client.Object, file string) (status, message string, err error) {
	gvk, err := apiutil.GVKForObject(obj, Scheme)
	if err != nil {
		return "", "", fmt.Errorf("the kind of %s: %w", obj.GetName(), err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.Client.Get(ctx, client.ObjectKeyFromObject(obj), u); err != nil {
		return "", "", fmt.Errorf("reading %s %s from %s: %w", gvk.Kind, obj.GetName(), c.Name, err)
	}
	if dir := os.Getenv(CaptureArgoCDTestdataEnv); dir != "" {
		if err := captureTestdata(dir, u, file); err != nil {
			return "", "", err
		}
	}
	return argocd.Health(u)
}

// captureTestdata writes u without its managed fields, which only make testdata long.
func captureTestdata(dir string, u *unstructured.Unstructured, file string) error {
	u = u.DeepCopy()
	u.SetManagedFields(nil)
	b, err := yaml.Marshal(u.Object)
	if err != nil {
		return fmt.Errorf("encoding %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	path := filepath.Join(dir, u.GetKind(), "testdata", file+".yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("capturing %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("capturing %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}
