package nodeimage

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/musterhq/muster/e2e/framework/kind"
)

// The node files name things the Go side also names; a drift between them breaks every
// cluster at boot, so it is caught here instead.
func TestNodeFilesAgreeWithTheBuild(t *testing.T) {
	toml, err := nodeFiles.ReadFile("files/etc/containerd/config.toml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(toml), `sandbox_image = "`+pauseImage+`"`) {
		t.Errorf("containerd's sandbox_image is not the preloaded pause image %s", pauseImage)
	}

	raw, err := nodeFiles.ReadFile("files/etc/cni/net.d/10-muster-bridge.conflist")
	if err != nil {
		t.Fatal(err)
	}
	var conflist struct {
		Plugins []struct {
			Type string `json:"type"`
			IPAM struct {
				Ranges [][]struct {
					Subnet string `json:"subnet"`
				} `json:"ranges"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(raw, &conflist); err != nil {
		t.Fatalf("the bridge conflist is not JSON: %v", err)
	}
	if p := conflist.Plugins; len(p) == 0 || p[0].Type != "bridge" || len(p[0].IPAM.Ranges) != 1 || p[0].IPAM.Ranges[0][0].Subnet != kind.PodSubnet {
		t.Errorf("the bridge network's range is %+v, want the clusters' pod subnet %s", conflist.Plugins, kind.PodSubnet)
	}
}

func TestComponentImagesAreBuiltUnderMustersOwnNames(t *testing.T) {
	img := componentImage{ref: "registry.k8s.io/pause:3.10.2", path: "/pause", base: "scratch"}
	if got := img.buildRef(); !strings.HasPrefix(got, "muster.local/") {
		t.Errorf("built as %s: that would retag the engine's own registry.k8s.io image", got)
	}
}
