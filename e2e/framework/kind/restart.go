package kind

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// StopCluster stops the cluster's node containers, keeping their file systems: the cluster
// is down as after a power cut, and StartCluster brings it back.
func (p *Provider) StopCluster(ctx context.Context, name string) error {
	return p.dockerOnNodes(ctx, name, "stop")
}

// StartCluster starts the stopped node containers again. A node may come back with another
// address on the kind network; the node image's entrypoint follows it (e2e/nodeimage). The
// caller waits for the API server.
func (p *Provider) StartCluster(ctx context.Context, name string) error {
	return p.dockerOnNodes(ctx, name, "start")
}

func (p *Provider) dockerOnNodes(ctx context.Context, name, verb string) error {
	list, err := p.kind.ListNodes(NamePrefix + name)
	if err != nil {
		return fmt.Errorf("listing the nodes of kind cluster %s: %w", name, err)
	}
	args := []string{verb}
	for _, n := range list {
		args = append(args, n.String())
	}
	if out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}
