// Command krew writes deploy/krew/muster.yaml, the krew plugin manifest that installs
// musterctl as `kubectl muster`, for the version in hack/krew/version. It builds the
// release archives it describes, musterctl_<os>_<arch>.tar.gz, into the dist directory
// (uploaded to the GitHub release of that version) and records each archive's sha256.
//
// The archives are reproducible: the binaries are built with -trimpath, no build ID and
// no VCS stamp, and the archives hold fixed modes, owners and times. The same tree and Go
// toolchain therefore give the same sha256s, so a release's manifest can be regenerated
// and checked.
//
// Usage, from the repository root (make krew-manifest):
//
//	go run ./hack/krew [-version v0.1.0] [-dist _output/dist] [-out deploy/krew/muster.yaml]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// versionFile holds the version the checked-in manifest describes: the last release's.
const versionFile = "hack/krew/version"

func main() {
	version := flag.String("version", "", "version to describe (default: the content of "+versionFile+")")
	dist := flag.String("dist", "_output/dist", "directory the release archives are written to")
	out := flag.String("out", "deploy/krew/muster.yaml", "manifest to write")
	flag.Parse()
	if err := run(*version, *dist, *out); err != nil {
		fmt.Fprintln(os.Stderr, "krew:", err)
		os.Exit(1)
	}
}

func run(version, dist, out string) error {
	if version == "" {
		v, err := readVersion(versionFile)
		if err != nil {
			return err
		}
		version = v
	}
	if err := os.MkdirAll(dist, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dist, err)
	}
	work, err := os.MkdirTemp("", "muster-krew-")
	if err != nil {
		return fmt.Errorf("creating a build directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(work) }()
	sums := map[platform]string{}
	for _, p := range platforms {
		sum, err := buildArchive(p, version, work, dist)
		if err != nil {
			return err
		}
		fmt.Printf("%s %s\n", sum, archiveName(p))
		sums[p] = sum
	}
	manifest, err := render(version, sums)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("creating the manifest's directory: %w", err)
	}
	if err := os.WriteFile(out, manifest, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return nil
}

// readVersion returns the version in path, which must be a v-prefixed semantic version as
// krew requires (it compares installed and indexed versions).
func readVersion(path string) (string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the version: %w", err)
	}
	v := strings.TrimSpace(string(raw))
	if !semver.MatchString(v) {
		return "", fmt.Errorf("%s: %q is not a version like v1.2.3", path, v)
	}
	return v, nil
}
