package toolchain

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// KruiseVersion is the OpenKruise release bench-broadcastjob runs side by side with the
// agent's BroadcastJob controller.
const KruiseVersion = "v1.9.1"

// KruiseManager is kruise-manager, built from the module root's main package.
const KruiseManager = "kruise-manager"

// kruiseCRDs are copied from the release's config/crd/bases: BroadcastJob, and ImagePullJob,
// on which kruise-manager registers a cache index at start whatever runs.
var kruiseCRDs = []string{"apps.kruise.io_broadcastjobs.yaml", "apps.kruise.io_imagepulljobs.yaml"}

const kruiseModule = "github.com/openkruise/kruise"

// kruise is not one of components: only bench-broadcastjob needs it, so neither `make
// toolchain` nor CI builds it; EnsureKruise does, on demand, in the same cache.
var kruise = component{
	name:     "kruise",
	version:  KruiseVersion,
	binaries: []string{KruiseManager},
	files:    kruiseCRDs,
	build:    buildKruise,
}

// Kruise locates a built kruise-manager and the CRDs it needs.
type Kruise struct {
	// Manager is the kruise-manager binary.
	Manager string
	// CRDs are the YAML files of the CRDs to install before it starts.
	CRDs []string
}

// EnsureKruise builds OpenKruise's manager once (several minutes) under the cache's lock and
// returns where it and its BroadcastJob CRD are cached.
func EnsureKruise(ctx context.Context, cacheDir string, log io.Writer) (*Kruise, error) {
	if err := ensureComponents(ctx, cacheDir, []component{kruise}, log); err != nil {
		return nil, err
	}
	dir := filepath.Join(cacheDir, kruise.entryName())
	k := &Kruise{Manager: filepath.Join(dir, KruiseManager)}
	for _, crd := range kruiseCRDs {
		k.CRDs = append(k.CRDs, filepath.Join(dir, crd))
	}
	return k, nil
}

// buildKruise builds kruise-manager in a helper module: kruise's go.mod replaces every
// k8s.io staging module (and more) with a release, and replace directives only count in
// the main module, so the helper copies them. It copies kruise's go.sum too: the checksum
// database this machine reaches does not answer for every module kruise pins (it had no
// k8s.io/dynamic-resource-allocation v0.32.10), and kruise's own sums are the ones its
// release was built with.
func buildKruise(ctx context.Context, g *goTool, src, outDir string) error {
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	mod, err := downloadModule(ctx, g, src, kruiseModule+"@"+KruiseVersion)
	if err != nil {
		return err
	}
	upstreamGoMod, err := os.ReadFile(mod.GoMod)
	if err != nil {
		return err
	}
	goMod, err := pinnedHelperGoMod("muster.local/toolchain/kruise", kruiseModule, KruiseVersion, upstreamGoMod)
	if err != nil {
		return err
	}
	if err := writeHelperModule(src, goMod); err != nil {
		return err
	}
	upstreamGoSum, err := os.ReadFile(filepath.Join(mod.Dir, "go.sum"))
	if err != nil {
		return err
	}
	own := fmt.Sprintf("%s %s %s\n%s %s/go.mod %s\n", kruiseModule, KruiseVersion, mod.Sum, kruiseModule, KruiseVersion, mod.GoModSum)
	if err := os.WriteFile(filepath.Join(src, "go.sum"), append(upstreamGoSum, own...), 0o644); err != nil {
		return err
	}
	if _, err := g.run(ctx, src, nil, "build", "-ldflags", "-s -w", "-o", filepath.Join(outDir, KruiseManager), kruiseModule); err != nil {
		return err
	}
	for _, name := range kruiseCRDs {
		crd, err := os.ReadFile(filepath.Join(mod.Dir, "config", "crd", "bases", name))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(outDir, name), crd, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// pinnedHelperGoMod is a helper module that requires module at version and carries the
// replace directives of the module's own go.mod (upstream), so that a build resolves what
// the module's release resolves. A replacement by a local directory cannot be resolved
// from the module proxy and is an error.
func pinnedHelperGoMod(helper, module, version string, upstream []byte) (string, error) {
	replaces, err := replaceDirectives(upstream)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", module, version, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "module %s\n\ngo 1.25\n\nrequire %s %s\n", helper, module, version)
	if len(replaces) > 0 {
		b.WriteString("\nreplace (\n")
		for _, r := range replaces {
			fmt.Fprintf(&b, "\t%s\n", r)
		}
		b.WriteString(")\n")
	}
	return b.String(), nil
}

// replaceDirectives returns the replace directives of a go.mod, one `old [v] => new v`
// each, from both the single-line and the block form.
func replaceDirectives(goMod []byte) ([]string, error) {
	var out []string
	inBlock := false
	sc := bufio.NewScanner(bytes.NewReader(goMod))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
			continue
		case inBlock && fields[0] == ")":
			inBlock = false
			continue
		case !inBlock && fields[0] == "replace" && len(fields) == 2 && fields[1] == "(":
			inBlock = true
			continue
		case !inBlock && fields[0] == "replace":
			fields = fields[1:]
		case !inBlock:
			continue
		}
		r, err := replaceDirective(fields)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

// replaceDirective checks one directive's fields: `old [version] => new version`.
func replaceDirective(fields []string) (string, error) {
	arrow := -1
	for i, f := range fields {
		if f == "=>" {
			arrow = i
		}
	}
	if arrow < 1 || arrow > 2 {
		return "", fmt.Errorf("malformed replace directive %q", strings.Join(fields, " "))
	}
	target := fields[arrow+1:]
	if len(target) == 1 || (len(target) > 0 && (strings.HasPrefix(target[0], ".") || strings.HasPrefix(target[0], "/"))) {
		return "", fmt.Errorf("replace directive %q points at a local directory", strings.Join(fields, " "))
	}
	if len(target) != 2 {
		return "", fmt.Errorf("malformed replace directive %q", strings.Join(fields, " "))
	}
	return strings.Join(fields, " "), nil
}
