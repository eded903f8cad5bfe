package charts

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	release "helm.sh/helm/v4/pkg/release/v1"
)

// Helm keeps each release, chart and rendered manifest, gzipped and base64-encoded in a
// Secret, whose data may not exceed 1 MiB: a larger release fails to install. Encoded as
// Helm's storage driver encodes it, each chart's release stays well under that.
func TestAReleaseFitsInHelmsStorage(t *testing.T) {
	const limit = 1 << 20
	for _, name := range []string{Hub, Agent} {
		chrt, err := load(name)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := Render(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		var manifest strings.Builder
		for _, o := range objs {
			raw, err := yaml.Marshal(o.Object)
			if err != nil {
				t.Fatal(err)
			}
			manifest.WriteString("---\n")
			manifest.Write(raw)
		}
		raw, err := json.Marshal(&release.Release{Name: name, Chart: chrt, Manifest: manifest.String()})
		if err != nil {
			t.Fatal(err)
		}
		var gz bytes.Buffer
		w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		if _, err := w.Write(raw); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		size := base64.StdEncoding.EncodedLen(gz.Len())
		t.Logf("%s: a release stores %d KiB of Helm's 1024", name, size>>10)
		if size > limit*3/4 {
			t.Errorf("%s: a release stores %d KiB, more than three quarters of the 1 MiB a Secret holds", name, size>>10)
		}
	}
}
