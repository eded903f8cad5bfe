package toolchain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
)

// CacheDirEnv overrides where the toolchain is cached.
const CacheDirEnv = "MUSTER_CACHE_DIR"

// CacheDir is $MUSTER_CACHE_DIR, or "muster" under the user's cache directory
// (~/.cache/muster on Linux), so that every clone and CI run on a machine shares one build.
func CacheDir() (string, error) {
	if dir := os.Getenv(CacheDirEnv); dir != "" {
		return filepath.Abs(dir)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user cache directory (set %s): %w", CacheDirEnv, err)
	}
	return filepath.Join(base, "muster"), nil
}

// Toolchain is a complete, verified set of binaries.
type Toolchain struct {
	// AssetsDir holds every binary (as links into the cache entries) under its usual name;
	// it is what KUBEBUILDER_ASSETS and kwokctl's binary flags point at.
	AssetsDir string
}

// Path returns the path of one binary, e.g. Path(Kubectl).
func (t *Toolchain) Path(binary string) string { return filepath.Join(t.AssetsDir, binary) }

// Locate returns the cached toolchain without building anything. It checks that every
// entry is complete and every binary has its recorded size, and fails with instructions
// when the cache is cold.
func Locate(cacheDir string) (*Toolchain, error) {
	for _, c := range components {
		if err := verifyEntry(filepath.Join(cacheDir, c.entryName()), c.version, c.binaries, verifySizes); err != nil {
			return nil, fmt.Errorf("toolchain %s in %s is not built (run `make toolchain`): %w", c.entryName(), cacheDir, err)
		}
	}
	dir := assetsDir(cacheDir)
	for _, c := range components {
		for _, b := range c.binaries {
			if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
				return nil, fmt.Errorf("toolchain assets in %s are missing (run `make toolchain`): %w", dir, err)
			}
		}
	}
	return &Toolchain{AssetsDir: dir}, nil
}

// Ensure returns the cached toolchain, first building every entry that is missing, partial
// or whose binaries no longer match their recorded digests. Concurrent callers on one
// machine are serialised by a lock file, so two clones never build the same entry at once.
func Ensure(ctx context.Context, cacheDir string, log io.Writer) (*Toolchain, error) {
	if err := ensureComponents(ctx, cacheDir, components, log); err != nil {
		return nil, err
	}
	if err := linkAssets(cacheDir); err != nil {
		return nil, err
	}
	return Locate(cacheDir)
}

// ensureComponents builds, under the cache's lock, each of comps that is not cached intact.
// The missing ones build at once, each in its own go command: on a cold machine a build
// spends minutes fetching modules and linking on one core, and another build's compiles
// can fill that idle time. Entries that would compile the same packages (kubernetes and
// kubernetes-node) are in different calls, so that the second finds them in the build cache.
func ensureComponents(ctx context.Context, cacheDir string, comps []component, log io.Writer) error {
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return err
	}
	unlock, err := LockDir(cacheDir)
	if err != nil {
		return err
	}
	defer unlock()

	var missing []component
	for _, c := range comps {
		dir := filepath.Join(cacheDir, c.entryName())
		err := verifyEntry(dir, c.version, c.binaries, verifyDigests, c.files...)
		if err == nil {
			fmt.Fprintf(log, "toolchain: %s is cached in %s\n", c.entryName(), dir)
			continue
		}
		if !errors.Is(err, errIncomplete) {
			return err
		}
		fmt.Fprintf(log, "toolchain: building %s (%v)\n", c.entryName(), err)
		missing = append(missing, c)
	}
	g := &goTool{log: &lockedWriter{w: log}}
	builds, ctx := errgroup.WithContext(ctx)
	for _, c := range missing {
		builds.Go(func() error {
			start := time.Now()
			if err := buildEntry(ctx, g, cacheDir, c); err != nil {
				return fmt.Errorf("building %s: %w", c.entryName(), err)
			}
			fmt.Fprintf(g.log, "toolchain: built %s in %s\n", c.entryName(), time.Since(start).Round(time.Second))
			return nil
		})
	}
	return builds.Wait()
}

// buildEntry builds into a scratch directory and renames it into place only once the
// manifest is written, so a crash leaves either the old entry or no entry, never half of one.
func buildEntry(ctx context.Context, g *goTool, cacheDir string, c component) error {
	final := filepath.Join(cacheDir, c.entryName())
	scratch := final + ".partial"
	if err := os.RemoveAll(scratch); err != nil {
		return err
	}
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		return err
	}
	src := filepath.Join(cacheDir, "src", c.entryName())
	if err := c.build(ctx, g, src, scratch); err != nil {
		return err
	}
	if err := writeManifest(scratch, c.version, append(append([]string{}, c.binaries...), c.files...)); err != nil {
		return err
	}
	if err := os.RemoveAll(final); err != nil {
		return err
	}
	return os.Rename(scratch, final)
}

func assetsDir(cacheDir string) string {
	key := strings.Join([]string{"kubernetes", KubernetesVersion, "etcd", EtcdVersion, "kwok", KwokVersion}, "-")
	return filepath.Join(cacheDir, "bin", key)
}

// linkAssets (re)creates the assets directory of symbolic links into the cache entries.
func linkAssets(cacheDir string) error {
	dir := assetsDir(cacheDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, c := range components {
		for _, b := range c.binaries {
			link := filepath.Join(dir, b)
			if err := os.Remove(link); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			if err := os.Symlink(filepath.Join(cacheDir, c.entryName(), b), link); err != nil {
				return err
			}
		}
	}
	return nil
}

// LockDir takes an exclusive advisory lock on dir (its .lock file), waiting for any other
// holder, and returns the function that releases it.
func LockDir(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// lockedWriter lets the concurrent builds share one log.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
