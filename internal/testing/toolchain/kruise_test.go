package toolchain

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPinnedHelperGoMod(t *testing.T) {
	cases := map[string]struct {
		upstream string
		want     string
		wantErr  bool
	}{
		"block and single-line replaces are copied in order, comments dropped": {
			upstream: `module github.com/openkruise/kruise

go 1.23.0

require (
	k8s.io/api v0.32.10
	k8s.io/kubernetes v1.32.10 // indirect
)

replace golang.org/x/sys => golang.org/x/sys v0.19.0

replace (
	// the staging modules of k8s.io/kubernetes
	k8s.io/api => k8s.io/api v0.32.10
	k8s.io/kube-proxy v0.0.0 => k8s.io/kube-proxy v0.30.9 // older on purpose
)
`,
			want: `module muster.local/toolchain/kruise

go 1.25

require github.com/openkruise/kruise v1.9.1

replace (
	golang.org/x/sys => golang.org/x/sys v0.19.0
	k8s.io/api => k8s.io/api v0.32.10
	k8s.io/kube-proxy v0.0.0 => k8s.io/kube-proxy v0.30.9
)
`,
		},
		"a go.mod without replaces gives a plain require": {
			upstream: "module x\n\nrequire k8s.io/api v0.32.10\n",
			want:     "module muster.local/toolchain/kruise\n\ngo 1.25\n\nrequire github.com/openkruise/kruise v1.9.1\n",
		},
		"a replace by a local directory cannot be built from the proxy": {
			upstream: "module x\n\nreplace k8s.io/api => ./staging/src/k8s.io/api\n",
			wantErr:  true,
		},
		"a replace by an absolute directory neither": {
			upstream: "module x\n\nreplace (\n\tk8s.io/api => /src/api v1.0.0\n)\n",
			wantErr:  true,
		},
		"a replace without a target is malformed": {
			upstream: "module x\n\nreplace (\n\tk8s.io/api =>\n)\n",
			wantErr:  true,
		},
		"a replace without an arrow is malformed": {
			upstream: "module x\n\nreplace k8s.io/api k8s.io/api v0.32.10\n",
			wantErr:  true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := pinnedHelperGoMod("muster.local/toolchain/kruise", "github.com/openkruise/kruise", "v1.9.1", []byte(tc.upstream))
			if tc.wantErr != (err != nil) {
				t.Fatalf("pinnedHelperGoMod() error = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("pinnedHelperGoMod() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVerifyEntryDataFiles(t *testing.T) {
	dir := t.TempDir()
	writeBinary(t, dir, "manager", "mmmm")
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), []byte("kind: X"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeManifest(dir, "v1", []string{"manager", "crd.yaml"}); err != nil {
		t.Fatal(err)
	}
	if err := verifyEntry(dir, "v1", []string{"manager"}, verifyDigests, "crd.yaml"); err != nil {
		t.Fatalf("a data file without the executable bit must pass: %v", err)
	}
	if err := verifyEntry(dir, "v1", []string{"manager", "crd.yaml"}, verifySizes); err == nil {
		t.Fatal("a data file checked as a binary must fail for lack of the executable bit")
	}
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), []byte("kind: Y"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := verifyEntry(dir, "v1", []string{"manager"}, verifyDigests, "crd.yaml"); err == nil {
		t.Fatal("a changed data file must fail the digest check")
	}
	if err := verifyEntry(dir, "v1", []string{"manager"}, verifySizes, "missing.yaml"); err == nil {
		t.Fatal("a data file the manifest does not list must fail")
	}
}
