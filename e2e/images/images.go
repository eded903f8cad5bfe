// Package images builds the container images the kind e2e suites run, on a machine that
// can pull nothing: each is a FROM-scratch image around a static binary of this module.
package images

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/musterhq/muster/internal/testing/toolchain"
)

// Packages of the images: the e2e suites' pod image (cmd workload), the hub and the agent.
const (
	Workload = "github.com/musterhq/muster/e2e/cmd/workload"
	Hub      = "github.com/musterhq/muster/cmd/muster-hub"
	Agent    = "github.com/musterhq/muster/cmd/muster-agent"
)

// BuildScratch builds pkg statically into a FROM-scratch image under repository, tagged
// with the binary's digest so that an unchanged binary reuses the image, and returns the
// image reference.
func BuildScratch(ctx context.Context, pkg, repository string) (string, error) {
	return BuildScratchVersion(ctx, pkg, repository, "")
}

// versionVar is the Muster version a binary reports (internal/version).
const versionVar = "github.com/musterhq/muster/internal/version.version"

// BuildScratchVersion is BuildScratch of a binary that reports version (when not empty)
// as its Muster version, as a release build does.
func BuildScratchVersion(ctx context.Context, pkg, repository, version string) (string, error) {
	dir, err := os.MkdirTemp("", "muster-image-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "app")
	// The same compile flags as the e2e suites' binaries (framework.BuildBinaries), so the
	// packages they compiled are reused: -trimpath alone would recompile every dependency
	// of the hub and the agent, minutes on two cores. No VCS stamp, so that an unchanged
	// binary keeps its digest, and so its tag, from one commit to the next.
	ldflags := "-s -w"
	if version != "" {
		ldflags += " -X " + versionVar + "=" + version
	}
	build := exec.CommandContext(ctx, "go", "build", "-buildvcs=false", "-ldflags", ldflags, "-o", bin, pkg)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	digest, err := toolchain.FileDigest(bin)
	if err != nil {
		return "", err
	}
	ref := repository + ":" + digest[:12]
	if exec.CommandContext(ctx, "docker", "image", "inspect", ref).Run() == nil {
		return ref, nil
	}
	dockerfile := "FROM scratch\nCOPY app /app\nUSER 65532:65532\nENTRYPOINT [\"/app\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		return "", err
	}
	if out, err := exec.CommandContext(ctx, "docker", "build", "--quiet", "--tag", ref, dir).CombinedOutput(); err != nil {
		return "", fmt.Errorf("docker build %s: %w\n%s", ref, err, out)
	}
	return ref, nil
}

// Archive returns a function that streams `docker save` of refs, for loading the images
// into kind nodes one node at a time.
func Archive(ctx context.Context, refs ...string) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		var out bytes.Buffer
		var stderr strings.Builder
		cmd := exec.CommandContext(ctx, "docker", append([]string{"save"}, refs...)...)
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("docker save %s: %w: %s", strings.Join(refs, " "), err, stderr.String())
		}
		return io.NopCloser(&out), nil
	}
}
