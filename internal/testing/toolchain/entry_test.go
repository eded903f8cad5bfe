package toolchain

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeBinary(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyEntry(t *testing.T) {
	bins := []string{"a", "b"}
	cases := map[string]struct {
		damage   func(t *testing.T, dir string)
		level    verifyLevel
		wantFail bool
	}{
		"complete entry passes a digest check": {
			damage: func(*testing.T, string) {}, level: verifyDigests,
		},
		"missing manifest means a build never finished": {
			damage:   func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, manifestFile)) },
			level:    verifySizes,
			wantFail: true,
		},
		"unparsable manifest": {
			damage:   func(t *testing.T, dir string) { writeBinary(t, dir, manifestFile, "{") },
			level:    verifySizes,
			wantFail: true,
		},
		"missing binary": {
			damage:   func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "b")) },
			level:    verifySizes,
			wantFail: true,
		},
		"truncated binary is caught by the cheap check": {
			damage:   func(t *testing.T, dir string) { writeBinary(t, dir, "a", "aa") },
			level:    verifySizes,
			wantFail: true,
		},
		"same-size corruption is caught by the digest check": {
			damage:   func(t *testing.T, dir string) { writeBinary(t, dir, "a", "xxxx") },
			level:    verifyDigests,
			wantFail: true,
		},
		"same-size corruption passes the cheap check": {
			damage: func(t *testing.T, dir string) { writeBinary(t, dir, "a", "xxxx") },
			level:  verifySizes,
		},
		"binary that lost its executable bit": {
			damage: func(t *testing.T, dir string) {
				if err := os.Chmod(filepath.Join(dir, "b"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			level:    verifySizes,
			wantFail: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeBinary(t, dir, "a", "aaaa")
			writeBinary(t, dir, "b", "bbbbbb")
			if err := writeManifest(dir, "v1", bins); err != nil {
				t.Fatal(err)
			}
			tc.damage(t, dir)
			err := verifyEntry(dir, "v1", bins, tc.level)
			if tc.wantFail != (err != nil) {
				t.Fatalf("verifyEntry() error = %v, want failure %v", err, tc.wantFail)
			}
			if err != nil && !errors.Is(err, errIncomplete) {
				t.Fatalf("verifyEntry() error = %v, want it to wrap errIncomplete so the entry is rebuilt", err)
			}
		})
	}
}

func TestVerifyEntryRejectsOtherVersion(t *testing.T) {
	dir := t.TempDir()
	writeBinary(t, dir, "a", "a")
	if err := writeManifest(dir, "v1", []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if err := verifyEntry(dir, "v2", []string{"a"}, verifySizes); !errors.Is(err, errIncomplete) {
		t.Fatalf("verifyEntry() for another version = %v, want errIncomplete", err)
	}
}

func TestKubernetesHelperGoMod(t *testing.T) {
	upstream := []byte(`module k8s.io/kubernetes

require k8s.io/api v0.0.0

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/cri-streaming => ./staging/src/k8s.io/cri-streaming
	github.com/other/thing => github.com/fork/thing v1.0.0
)
`)
	got, err := kubernetesHelperGoMod(upstream, "v1.36.3")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"require k8s.io/kubernetes v1.36.3",
		"k8s.io/api => k8s.io/api v0.36.3",
		"k8s.io/cri-streaming => k8s.io/cri-streaming v0.36.3",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("helper go.mod lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "github.com/other/thing") {
		t.Errorf("helper go.mod copied a non-staging replace:\n%s", got)
	}
	if _, err := kubernetesHelperGoMod([]byte("module x\n"), "v1.36.3"); err == nil {
		t.Error("a go.mod without staging replaces must be an error: the layout changed upstream")
	}
}

func TestKubernetesLDFlags(t *testing.T) {
	got := kubernetesLDFlags("v1.36.3")
	for _, want := range []string{
		"k8s.io/component-base/version.gitVersion=v1.36.3",
		"k8s.io/component-base/version.gitMajor=1",
		"k8s.io/component-base/version.gitMinor=36",
		"k8s.io/client-go/pkg/version.gitVersion=v1.36.3",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("ldflags %q lack %q", got, want)
		}
	}
}
