package toolchain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// manifestFile is written last into an entry, after every binary is in place; its presence
// is what marks an entry as complete.
const manifestFile = "manifest.json"

// manifest records what a finished build produced.
type manifest struct {
	Version string `json:"version"`
	// Binaries maps each binary's file name to the hex SHA-256 of its content.
	Binaries map[string]string `json:"binaries"`
	// Sizes lets Locate notice truncated files without hashing them.
	Sizes map[string]int64 `json:"sizes"`
}

// verifyLevel says how hard an entry is checked.
type verifyLevel int

const (
	// verifySizes checks that every binary exists with its recorded size: cheap enough for
	// every test binary that needs the toolchain.
	verifySizes verifyLevel = iota
	// verifyDigests re-hashes every binary: what the build step does before trusting a cache.
	verifyDigests
)

// errIncomplete marks an entry that has to be (re)built.
var errIncomplete = errors.New("cache entry incomplete")

// verifyEntry checks that dir holds a finished build of version with every binary in want
// and every data file in files.
func verifyEntry(dir, version string, want []string, level verifyLevel, files ...string) error {
	raw, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		return fmt.Errorf("%w: %w", errIncomplete, err)
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("%w: manifest in %s: %w", errIncomplete, dir, err)
	}
	if m.Version != version {
		return fmt.Errorf("%w: %s holds version %q, want %q", errIncomplete, dir, m.Version, version)
	}
	for i, name := range append(append([]string{}, want...), files...) {
		path := filepath.Join(dir, name)
		info, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("%w: %w", errIncomplete, err)
		}
		binary := i < len(want)
		if info.Size() != m.Sizes[name] || (binary && info.Mode()&0o111 == 0) {
			return fmt.Errorf("%w: %s has size %d mode %v, manifest says size %d", errIncomplete, path, info.Size(), info.Mode(), m.Sizes[name])
		}
		if level < verifyDigests {
			continue
		}
		sum, err := FileDigest(path)
		if err != nil {
			return fmt.Errorf("%w: %w", errIncomplete, err)
		}
		if sum != m.Binaries[name] {
			return fmt.Errorf("%w: %s has digest %s, manifest says %s", errIncomplete, path, sum, m.Binaries[name])
		}
	}
	return nil
}

// writeManifest hashes the binaries in dir and records them; it is the last step of a build.
func writeManifest(dir, version string, binaries []string) error {
	m := manifest{Version: version, Binaries: map[string]string{}, Sizes: map[string]int64{}}
	for _, name := range binaries {
		path := filepath.Join(dir, name)
		sum, err := FileDigest(path)
		if err != nil {
			return err
		}
		info, err := os.Stat(path)
		if err != nil {
			return err
		}
		m.Binaries[name] = sum
		m.Sizes[name] = info.Size()
	}
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, manifestFile), raw, 0o644)
}

// FileDigest is the hex SHA-256 of a file's content.
func FileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hashing %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
