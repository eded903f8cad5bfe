package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

const checkedIn = "../../deploy/krew/muster.yaml"

// The manifest's shape, as krew's index.Plugin (sigs.k8s.io/krew/pkg/index) decodes it.
// krew's own types and validation cannot be imported here: its module requires client-go
// v11.0.0+incompatible, which Go's version selection would pick over Muster's client-go.
type plugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string         `json:"version"`
		Homepage         string         `json:"homepage"`
		ShortDescription string         `json:"shortDescription"`
		Description      string         `json:"description"`
		Caveats          string         `json:"caveats"`
		Platforms        []krewPlatform `json:"platforms"`
	} `json:"spec"`
}

type krewPlatform struct {
	Selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	} `json:"selector"`
	URI    string `json:"uri"`
	Sha256 string `json:"sha256"`
	Files  []struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"files"`
	Bin string `json:"bin"`
}

// TestCheckedInManifest is `make verify`'s check of deploy/krew/muster.yaml: it describes
// the version in hack/krew/version, krew would accept it, and it is exactly what the
// generator renders for that version with those archives' sha256s (no hand edits, no
// template change left unrendered). The sha256s themselves are those of the release's
// archives, which only `make krew-manifest` at the release builds.
func TestCheckedInManifest(t *testing.T) {
	raw, err := os.ReadFile(checkedIn)
	if err != nil {
		t.Fatal(err)
	}
	var p plugin
	if err := yaml.UnmarshalStrict(raw, &p); err != nil {
		t.Fatalf("%s does not decode as a krew Plugin: %v", checkedIn, err)
	}
	if err := validate(p); err != nil {
		t.Fatalf("%s: krew would refuse it: %v", checkedIn, err)
	}
	version, err := readVersion("version")
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.Version != version {
		t.Errorf("%s is for %s, hack/krew/version says %s: run make krew-manifest", checkedIn, p.Spec.Version, version)
	}
	sums := map[platform]string{}
	for _, e := range p.Spec.Platforms {
		sums[platform{e.Selector.MatchLabels["os"], e.Selector.MatchLabels["arch"]}] = e.Sha256
	}
	want, err := render(version, sums)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(raw)); diff != "" {
		t.Errorf("%s is not what make krew-manifest writes (-generated +checked in):\n%s", checkedIn, diff)
	}
}

var (
	pluginName = regexp.MustCompile(`^[\w-]+$`)
	sha256Hex  = regexp.MustCompile(`^[a-f0-9]{64}$`)
)

// validate applies the rules krew's index validation applies to a plugin manifest
// (sigs.k8s.io/krew internal/index/validation), to the fields Muster's manifest uses.
func validate(p plugin) error {
	switch {
	case p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2":
		return fmt.Errorf("apiVersion %q", p.APIVersion)
	case p.Kind != "Plugin":
		return fmt.Errorf("kind %q", p.Kind)
	case p.Metadata.Name != "muster" || !pluginName.MatchString(p.Metadata.Name):
		return fmt.Errorf("name %q, want muster (the file's name)", p.Metadata.Name)
	case p.Spec.ShortDescription == "" || strings.ContainsAny(p.Spec.ShortDescription, "\r\n"):
		return fmt.Errorf("shortDescription %q must be one non-empty line", p.Spec.ShortDescription)
	case !semver.MatchString(p.Spec.Version):
		return fmt.Errorf("version %q is not a v-prefixed semantic version", p.Spec.Version)
	case len(p.Spec.Platforms) != len(platforms):
		return fmt.Errorf("%d platforms, want %d", len(p.Spec.Platforms), len(platforms))
	}
	for _, e := range p.Spec.Platforms {
		if err := validatePlatform(e); err != nil {
			return fmt.Errorf("platform %v: %w", e.Selector.MatchLabels, err)
		}
	}
	return nil
}

func validatePlatform(e krewPlatform) error {
	for k := range e.Selector.MatchLabels {
		if k != "os" && k != "arch" {
			return fmt.Errorf("selector key %q: krew selects on os and arch only", k)
		}
	}
	goos, arch := e.Selector.MatchLabels["os"], e.Selector.MatchLabels["arch"]
	switch {
	case goos == "" || arch == "":
		return fmt.Errorf("selector must name os and arch")
	case !strings.HasPrefix(e.URI, releaseURL+"/v") || !strings.HasSuffix(e.URI, "/"+archiveName(platform{goos, arch})):
		return fmt.Errorf("uri %q is not the release archive for %s/%s", e.URI, goos, arch)
	case !sha256Hex.MatchString(e.Sha256):
		return fmt.Errorf("sha256 %q is not 64 lower-case hex digits", e.Sha256)
	case e.Bin != "kubectl-muster":
		return fmt.Errorf("bin %q, want kubectl-muster (kubectl finds plugins by that name)", e.Bin)
	case len(e.Files) == 0 || e.Files[0].From == "" || e.Files[0].To == "":
		return fmt.Errorf("files must each have from and to")
	}
	return nil
}

func TestValidateRejects(t *testing.T) {
	sums := map[platform]string{}
	for _, p := range platforms {
		sums[p] = strings.Repeat("ab", 32)
	}
	good, err := render("v1.2.3", sums)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(p *plugin){
		"nothing":              func(*plugin) {},
		"old apiVersion":       func(p *plugin) { p.APIVersion = "krew.googlecontainertools.github.com/v1alpha1" },
		"version without v":    func(p *plugin) { p.Spec.Version = "1.2.3" },
		"two-line description": func(p *plugin) { p.Spec.ShortDescription = "a\nb" },
		"short sha256":         func(p *plugin) { p.Spec.Platforms[0].Sha256 = "abc" },
		"upper-case sha256":    func(p *plugin) { p.Spec.Platforms[1].Sha256 = strings.Repeat("AB", 32) },
		"selector on os only":  func(p *plugin) { delete(p.Spec.Platforms[2].Selector.MatchLabels, "arch") },
		"other archive's uri":  func(p *plugin) { p.Spec.Platforms[3].URI = p.Spec.Platforms[0].URI },
		"bin named musterctl":  func(p *plugin) { p.Spec.Platforms[0].Bin = "musterctl" },
		"a platform left out":  func(p *plugin) { p.Spec.Platforms = p.Spec.Platforms[1:] },
	}
	for name, breakIt := range cases {
		t.Run(name, func(t *testing.T) {
			var p plugin
			if err := yaml.UnmarshalStrict(good, &p); err != nil {
				t.Fatal(err)
			}
			breakIt(&p)
			err := validate(p)
			if (err == nil) != (name == "nothing") {
				t.Errorf("validate: %v", err)
			}
		})
	}
}

func TestRenderRefuses(t *testing.T) {
	all := map[platform]string{}
	for _, p := range platforms {
		all[p] = strings.Repeat("0", 64)
	}
	if _, err := render("0.1.0", all); err == nil {
		t.Error("rendered a version without its v, which krew cannot compare")
	}
	delete(all, platform{"darwin", "arm64"})
	if _, err := render("v0.1.0", all); err == nil {
		t.Error("rendered a manifest with a platform missing its sha256")
	}
}

// TestWriteArchiveIsReproducible: the same binary gives the same archive bytes (so the
// same sha256), and the archive unpacks to an executable musterctl with that content.
func TestWriteArchiveIsReproducible(t *testing.T) {
	content := []byte("#!/bin/sh\necho musterctl\n")
	var first, second bytes.Buffer
	if err := writeArchive(&first, "musterctl", content); err != nil {
		t.Fatal(err)
	}
	if err := writeArchive(&second, "musterctl", content); err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(first.Bytes()) != sha256.Sum256(second.Bytes()) {
		t.Fatal("two archives of the same binary differ")
	}
	gz, err := gzip.NewReader(&first)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	hdr, err := tr.Next()
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(tr)
	if err != nil {
		t.Fatal(err)
	}
	if hdr.Name != "musterctl" || hdr.Mode != 0o755 || !bytes.Equal(got, content) {
		t.Errorf("archive holds %s mode %o %q, want musterctl mode 755 %q", hdr.Name, hdr.Mode, got, content)
	}
	if _, err := tr.Next(); err != io.EOF {
		t.Errorf("archive holds more than musterctl: %v", err)
	}
}
