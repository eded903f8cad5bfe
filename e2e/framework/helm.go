package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// The Helm releases the framework installs: each chart in deploy/charts, released under
// its own name.
const (
	HubRelease   = "muster-hub"
	AgentRelease = "muster-agent"
)

// HelmInstall runs `helm install` of the chart named release (deploy/charts/<release>)
// into c with values, and records the release; it returns helm's output.
func (m *Muster) HelmInstall(ctx context.Context, c *Cluster, release string, values map[string]any) (string, error) {
	out, err := m.helm(ctx, c, values, "install", release)
	if err == nil {
		m.HelmReleases[c.Name] = release
	}
	return out, err
}

// HelmUpgrade runs `helm upgrade --reuse-values --wait` of release in c with values over
// the release's own, as an operator rolls a new image out; it returns helm's output.
func (m *Muster) HelmUpgrade(ctx context.Context, c *Cluster, release string, values map[string]any, timeout string) (string, error) {
	return m.helm(ctx, c, values, "upgrade", release, "--reuse-values", "--wait", "--timeout", timeout)
}

// HelmUninstall runs `helm uninstall` of release in c.
func (m *Muster) HelmUninstall(ctx context.Context, c *Cluster, release string) (string, error) {
	args := []string{"uninstall", release, "--kubeconfig", c.Kubeconfig}
	out, err := runCommand(ctx, m.Bin.Helm, args...)
	if err != nil {
		return out, fmt.Errorf("helm %s: %w", strings.Join(args, " "), err)
	}
	delete(m.HelmReleases, c.Name)
	return out, nil
}

func (m *Muster) helm(ctx context.Context, c *Cluster, values map[string]any, verb, release string, extra ...string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	raw, err := yaml.Marshal(values)
	if err != nil {
		return "", err
	}
	file, err := os.CreateTemp(m.Fleet.Dir, "helm-values-*.yaml")
	if err != nil {
		return "", err
	}
	defer os.Remove(file.Name())
	if _, err := file.Write(raw); err != nil {
		return "", err
	}
	if err := file.Close(); err != nil {
		return "", err
	}
	args := append([]string{verb, release, filepath.Join(root, "deploy", "charts", release), "--kubeconfig", c.Kubeconfig, "--values", file.Name()}, extra...)
	out, err := runCommand(ctx, m.Bin.Helm, args...)
	if err != nil {
		return out, fmt.Errorf("helm %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}

// ImageValues are the charts' image values for an image reference repository:tag.
func ImageValues(image string) map[string]any {
	colon := strings.LastIndex(image, ":")
	return map[string]any{"repository": image[:colon], "tag": image[colon+1:]}
}
