package capfilter

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestMissing(t *testing.T) {
	// The bounding set of the Firecracker VMs this project's CI runs on: every capability
	// up to CAP_CHECKPOINT_RESTORE but CAP_SYS_RESOURCE (bit 24).
	if got := Missing(0x000001fffeffffff); !reflect.DeepEqual(got, []string{"CAP_SYS_RESOURCE"}) {
		t.Errorf("Missing = %v, want [CAP_SYS_RESOURCE]", got)
	}
	if got := Missing(0x000001ffffffffff); len(got) != 0 {
		t.Errorf("a full bounding set misses %v", got)
	}
}

func TestParseCapBnd(t *testing.T) {
	mask, err := parseCapBnd(strings.NewReader("Name:\tx\nCapEff:\t0000000000000000\nCapBnd:\t000001fffeffffff\n"))
	if err != nil || mask != 0x000001fffeffffff {
		t.Fatalf("parseCapBnd = %x, %v", mask, err)
	}
	if _, err := parseCapBnd(strings.NewReader("Name:\tx\n")); err == nil {
		t.Fatal("a status without CapBnd parsed")
	}
}

func TestFilterFile(t *testing.T) {
	dir := t.TempDir()
	drop := map[string]bool{"CAP_SYS_RESOURCE": true}
	caps := map[string]any{
		"bounding":  []any{"CAP_CHOWN", "CAP_SYS_RESOURCE"},
		"effective": []any{"CAP_SYS_RESOURCE", "CAP_KILL"},
		"permitted": []any{"CAP_SYS_RESOURCE"},
	}
	write := func(name string, doc any) string {
		raw, _ := json.Marshal(doc)
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	read := func(path string) map[string]any {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		return doc
	}
	want := map[string]any{
		"bounding":  []any{"CAP_CHOWN"},
		"effective": []any{"CAP_KILL"},
		"permitted": []any{},
	}

	bundle := write("config.json", map[string]any{"ociVersion": "1.0.2", "process": map[string]any{"capabilities": caps, "cwd": "/"}})
	if err := FilterFile(bundle, drop, true); err != nil {
		t.Fatal(err)
	}
	got := read(bundle)
	if !reflect.DeepEqual(got["process"].(map[string]any)["capabilities"], want) || got["ociVersion"] != "1.0.2" {
		t.Errorf("bundle config after filtering: %v", got)
	}

	process := write("process.json", map[string]any{"capabilities": caps, "args": []any{"sh"}})
	if err := FilterFile(process, drop, false); err != nil {
		t.Fatal(err)
	}
	got = read(process)
	if !reflect.DeepEqual(got["capabilities"], want) || got["args"] == nil {
		t.Errorf("exec process after filtering: %v", got)
	}
}
