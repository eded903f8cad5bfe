package toolchain

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// component is one cache entry: a set of binaries built together at one version.
type component struct {
	name     string
	version  string
	binaries []string
	// files are data files (no executable bit) built with the binaries and checked the
	// same way.
	files []string
	// build compiles every binary into outDir; src is a scratch directory it may use for
	// helper modules.
	build func(ctx context.Context, g *goTool, src, outDir string) error
}

func (c component) entryName() string { return c.name + "-" + c.version }

var components = []component{
	{
		name:     "kubernetes",
		version:  KubernetesVersion,
		binaries: []string{KubeAPIServer, KubeControllerManager, KubeScheduler, Kubectl},
		build:    kubernetesCommands(KubeAPIServer, KubeControllerManager, KubeScheduler, Kubectl),
	},
	{
		name:     "etcd",
		version:  EtcdVersion,
		binaries: []string{Etcd},
		build:    buildEtcd,
	},
	{
		name:     "kwok",
		version:  KwokVersion,
		binaries: []string{Kwok, Kwokctl},
		build: func(ctx context.Context, g *goTool, src, outDir string) error {
			return goInstall(ctx, g, src, outDir, KwokVersion, "sigs.k8s.io/kwok/cmd/"+Kwok, "sigs.k8s.io/kwok/cmd/"+Kwokctl)
		},
	},
}

// noDWARF skips the compiler's debug information, which the linker's -s -w throws away
// from every binary built here: on a cold machine the compile is the toolchain's cost.
const noDWARF = "-gcflags=all=-dwarf=false"

// goTool runs the go command with the environment every toolchain build shares.
type goTool struct {
	log io.Writer
}

func (g *goTool) run(ctx context.Context, dir string, extraEnv []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	// Static binaries that do not depend on the machine's C toolchain; the helper modules
	// are not part of any workspace and may add what they need to their go.mod.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-mod=mod "+noDWARF)
	cmd.Env = append(cmd.Env, extraEnv...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = g.log
	fmt.Fprintf(g.log, "toolchain: (in %s) go %s\n", dir, strings.Join(args, " "))
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return stdout.Bytes(), nil
}

// writeHelperModule creates a throwaway module whose only purpose is to pin what a build
// resolves; it is rewritten from scratch each time so a half-written one cannot linger.
func writeHelperModule(dir, goMod string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod), 0o644)
}

// stagingReplace matches the replace directives by which k8s.io/kubernetes points its
// staging modules at its own source tree.
var stagingReplace = regexp.MustCompile(`^\s*(k8s\.io/[A-Za-z0-9._/-]+)\s+=>\s+\./staging/`)

// kubernetesHelperGoMod turns k8s.io/kubernetes' own go.mod into a helper module that can
// build it from the module proxy: the staging modules it replaces with local paths are
// replaced with their published releases instead.
func kubernetesHelperGoMod(upstreamGoMod []byte, k8sVersion string) (string, error) {
	stagingVersion := "v0" + strings.TrimPrefix(k8sVersion, "v1")
	var b strings.Builder
	fmt.Fprintf(&b, "module muster.local/toolchain/kubernetes\n\ngo 1.25\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n", k8sVersion)
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(upstreamGoMod))
	for sc.Scan() {
		if m := stagingReplace.FindStringSubmatch(sc.Text()); m != nil {
			fmt.Fprintf(&b, "\t%s => %s %s\n", m[1], m[1], stagingVersion)
			found++
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	if found == 0 {
		return "", fmt.Errorf("k8s.io/kubernetes %s: go.mod has no staging replace directives", k8sVersion)
	}
	b.WriteString(")\n")
	return b.String(), nil
}

// downloadedModule is what `go mod download -json` reports of a module.
type downloadedModule struct {
	// GoMod is the path of its go.mod and Dir of its extracted source.
	GoMod, Dir string
	// Sum and GoModSum are its go.sum hashes.
	Sum, GoModSum string
	Error         string
}

// downloadModule downloads a module through the module proxy.
func downloadModule(ctx context.Context, g *goTool, dir, modVersion string) (downloadedModule, error) {
	var info downloadedModule
	out, err := g.run(ctx, dir, nil, "mod", "download", "-json", modVersion)
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(out, &info); err != nil {
		return info, fmt.Errorf("go mod download %s: %w", modVersion, err)
	}
	if info.Error != "" {
		return info, fmt.Errorf("go mod download %s: %s", modVersion, info.Error)
	}
	return info, nil
}

// moduleGoMod downloads a module's go.mod through the module proxy and returns it.
func moduleGoMod(ctx context.Context, g *goTool, dir, modVersion string) ([]byte, error) {
	info, err := downloadModule(ctx, g, dir, modVersion)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(info.GoMod)
}

// kubernetesCommands builds commands of k8s.io/kubernetes (cmd/<name>) in a helper module.
func kubernetesCommands(cmds ...string) func(ctx context.Context, g *goTool, src, outDir string) error {
	return func(ctx context.Context, g *goTool, src, outDir string) error {
		if err := os.MkdirAll(src, 0o755); err != nil {
			return err
		}
		upstream, err := moduleGoMod(ctx, g, src, "k8s.io/kubernetes@"+KubernetesVersion)
		if err != nil {
			return err
		}
		goMod, err := kubernetesHelperGoMod(upstream, KubernetesVersion)
		if err != nil {
			return err
		}
		if err := writeHelperModule(src, goMod); err != nil {
			return err
		}
		args := []string{"build", "-ldflags", kubernetesLDFlags(KubernetesVersion), "-o", outDir + string(os.PathSeparator)}
		for _, cmd := range cmds {
			args = append(args, "k8s.io/kubernetes/cmd/"+cmd)
		}
		_, err = g.run(ctx, src, nil, args...)
		return err
	}
}

// kubernetesLDFlags stamps the release version into the binaries; without it they report
// v0.0.0-master, which kubectl and the apiserver's compatibility checks treat as ancient.
func kubernetesLDFlags(version string) string {
	major, minor, _ := strings.Cut(strings.TrimPrefix(version, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	flags := []string{"-s", "-w"}
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		flags = append(flags,
			"-X", pkg+".gitVersion="+version,
			"-X", pkg+".gitMajor="+major,
			"-X", pkg+".gitMinor="+minor,
			"-X", pkg+".gitTreeState=clean",
		)
	}
	return strings.Join(flags, " ")
}

// buildEtcd uses a helper module because etcd's server module carries replace directives,
// which `go install module@version` refuses.
func buildEtcd(ctx context.Context, g *goTool, src, outDir string) error {
	goMod := fmt.Sprintf("module muster.local/toolchain/etcd\n\ngo 1.25\n\nrequire go.etcd.io/etcd/server/v3 %s\n", EtcdVersion)
	if err := writeHelperModule(src, goMod); err != nil {
		return err
	}
	_, err := g.run(ctx, src, nil, "build", "-ldflags", "-s -w", "-o", filepath.Join(outDir, Etcd), "go.etcd.io/etcd/server/v3")
	return err
}

// goInstall builds released commands straight from the module proxy; `go install
// path@version` ignores any surrounding module.
func goInstall(ctx context.Context, g *goTool, src, outDir, version string, pkgs ...string) error {
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	for _, p := range pkgs {
		if _, err := g.run(ctx, src, []string{"GOBIN=" + outDir, "GOFLAGS=" + noDWARF}, "install", "-ldflags", "-s -w", p+"@"+version); err != nil {
			return err
		}
	}
	return nil
}
