package toolchain

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rendezvous returns a build that finishes only once every other build made by the same
// rendezvous has started: it completes only when the builds run at the same time.
func rendezvous(t *testing.T, n int) func(binary string) func(context.Context, *goTool, string, string) error {
	started := make(chan struct{}, n)
	return func(binary string) func(context.Context, *goTool, string, string) error {
		return func(ctx context.Context, _ *goTool, _, outDir string) error {
			started <- struct{}{}
			deadline := time.After(10 * time.Second)
			for len(started) < n {
				select {
				case <-deadline:
					return errors.New("the other builds never started beside this one")
				case <-time.After(10 * time.Millisecond):
				}
			}
			writeBinary(t, outDir, binary, "built "+binary)
			return nil
		}
	}
}

func TestEnsureComponentsBuildsTheMissingEntriesAtOnce(t *testing.T) {
	cache := t.TempDir()
	meet := rendezvous(t, 2)
	comps := []component{
		{name: "one", version: "v1", binaries: []string{"one"}, build: meet("one")},
		{name: "two", version: "v2", binaries: []string{"two"}, build: meet("two")},
	}
	var log bytes.Buffer
	if err := ensureComponents(context.Background(), cache, comps, &log); err != nil {
		t.Fatalf("ensureComponents: %v\n%s", err, log.String())
	}
	for _, c := range comps {
		if err := verifyEntry(filepath.Join(cache, c.entryName()), c.version, c.binaries, verifyDigests); err != nil {
			t.Errorf("%s after the build: %v", c.entryName(), err)
		}
	}

	// A second call finds both cached and builds nothing: a build now would fail the test.
	log.Reset()
	for i := range comps {
		comps[i].build = func(context.Context, *goTool, string, string) error {
			return errors.New("rebuilt an intact entry")
		}
	}
	if err := ensureComponents(context.Background(), cache, comps, &log); err != nil {
		t.Fatalf("second ensureComponents: %v", err)
	}
	if got := strings.Count(log.String(), "is cached"); got != 2 {
		t.Errorf("second call logged %d cached entries, want 2:\n%s", got, log.String())
	}
}

func TestEnsureComponentsReportsAFailedBuildAndLeavesNoEntry(t *testing.T) {
	cache := t.TempDir()
	comps := []component{
		{name: "good", version: "v1", binaries: []string{"good"}, build: func(_ context.Context, _ *goTool, _, outDir string) error {
			writeBinary(t, outDir, "good", "built")
			return nil
		}},
		{name: "bad", version: "v1", binaries: []string{"bad"}, build: func(context.Context, *goTool, string, string) error {
			return errors.New("compiler exploded")
		}},
	}
	err := ensureComponents(context.Background(), cache, comps, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "building bad-v1: compiler exploded") {
		t.Fatalf("ensureComponents = %v, want the failed build named", err)
	}
	if err := verifyEntry(filepath.Join(cache, "bad-v1"), "v1", []string{"bad"}, verifySizes); !errors.Is(err, errIncomplete) {
		t.Errorf("the failed entry is usable (%v); a later run would not rebuild it", err)
	}
}
