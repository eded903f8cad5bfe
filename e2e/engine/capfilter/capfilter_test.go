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
	for _, tc := range []struct {
		name    string
		capBnd  uint64
		lastCap int
		want    []string
	}{
		// The bounding set of the Firecracker VMs this project's CI runs on: every
		// capability up to CAP_CHECKPOINT_RESTORE (40) but CAP_SYS_RESOURCE (bit 24).
		{"CI VM", 0x000001fffeffffff, 40, []string{"CAP_SYS_RESOURCE"}},
		{"full set", 0x000001ffffffffff, 40, nil},
		// A kernel before 5.9 knows up to CAP_AUDIT_READ (37): the three after it are
		// absent from its bounding set, and not missing.
		{"kernel 5.4, full set", 0x0000003fffffffff, 37, nil},
		{"kernel 5.4 without CAP_SYS_RESOURCE", 0x0000003ffeffffff, 37, []string{"CAP_SYS_RESOURCE"}},
		// The same mask read as if the kernel knew every capability.
		{"kernel 5.4's mask, lastCap 40", 0x0000003fffffffff, 40, []string{"CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE"}},
		// A kernel newer than this list: capabilities without a name here are not reported.
		{"newer kernel", 0x0000ffffffffffff, 47, nil},
		{"empty set", 0, 2, []string{"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH"}},
		{"negative lastCap", 0, -1, nil},
	} {
		if got := Missing(tc.capBnd, tc.lastCap); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Missing(%#x, %d) = %v, want %v", tc.name, tc.capBnd, tc.lastCap, got, tc.want)
		}
	}
}

func TestParseCapBnd(t *testing.T) {
	for _, tc := range []struct {
		status  string
		want    uint64
		wantErr string
	}{
		{"Name:\tx\nCapEff:\t0000000000000000\nCapBnd:\t000001fffeffffff\n", 0x000001fffeffffff, ""},
		{"CapBnd: 0000003fffffffff", 0x0000003fffffffff, ""},
		{"Name:\tx\n", 0, "no CapBnd line"},
		{"CapBnd:\tzz\n", 0, "parsing CapBnd"},
	} {
		got, err := parseCapBnd(strings.NewReader(tc.status))
		if got != tc.want || !errorContains(err, tc.wantErr) {
			t.Errorf("parseCapBnd(%q) = %#x, %v; want %#x, error %q", tc.status, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestParseLastCap(t *testing.T) {
	for _, tc := range []struct {
		contents string
		want     int
		wantErr  string
	}{
		{"40\n", 40, ""},
		{"37", 37, ""},
		{"", 0, "parsing cap_last_cap"},
		{"x\n", 0, "parsing cap_last_cap"},
		{"-1\n", 0, "negative"},
	} {
		got, err := parseLastCap(tc.contents)
		if got != tc.want || !errorContains(err, tc.wantErr) {
			t.Errorf("parseLastCap(%q) = %d, %v; want %d, error %q", tc.contents, got, err, tc.want, tc.wantErr)
		}
	}
}

// errorContains tells whether err is nil when want is "", and else holds want.
func errorContains(err error, want string) bool {
	if want == "" {
		return err == nil
	}
	return err != nil && strings.Contains(err.Error(), want)
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

func TestFilterFileKeepsNumbers(t *testing.T) {
	for _, tc := range []struct {
		name, doc      string
		isBundleConfig bool
		// want are texts that must be in the rewritten file as they are.
		want []string
	}{
		{
			name:           "bundle config",
			doc:            `{"ociVersion":"1.0.2","process":{"capabilities":{"bounding":["CAP_SYS_RESOURCE"]},"rlimits":[{"type":"RLIMIT_NOFILE","hard":18446744073709551615,"soft":1048576},{"type":"RLIMIT_NICE","hard":-20,"soft":-9223372036854775808}],"oomScoreAdj":-999},"linux":{"resources":{"memory":{"limit":9007199254740993}}}}`,
			isBundleConfig: true,
			want:           []string{`"hard":18446744073709551615`, `"soft":1048576`, `"hard":-20`, `"soft":-9223372036854775808`, `"oomScoreAdj":-999`, `"limit":9007199254740993`, `"bounding":[]`},
		},
		{
			name: "exec process",
			doc:  `{"capabilities":{"bounding":["CAP_SYS_RESOURCE","CAP_KILL"]},"rlimits":[{"type":"RLIMIT_CORE","hard":18446744073709551615,"soft":1.5e3}]}`,
			want: []string{`"hard":18446744073709551615`, `"soft":1.5e3`, `"bounding":["CAP_KILL"]`},
		},
	} {
		path := filepath.Join(t.TempDir(), "spec.json")
		if err := os.WriteFile(path, []byte(tc.doc), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := FilterFile(path, map[string]bool{"CAP_SYS_RESOURCE": true}, tc.isBundleConfig); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(raw), w) {
				t.Errorf("%s: rewritten file lacks %s:\n%s", tc.name, w, raw)
			}
		}
	}
}

func TestFilterFileRefuses(t *testing.T) {
	for _, doc := range []string{`{"process":`, `{"process":{}} {}`, `[]`} {
		path := filepath.Join(t.TempDir(), "config.json")
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := FilterFile(path, map[string]bool{"CAP_SYS_RESOURCE": true}, true); err == nil {
			t.Errorf("FilterFile accepted %s", doc)
		}
		if raw, _ := os.ReadFile(path); string(raw) != doc {
			t.Errorf("FilterFile rewrote %s as %s", doc, raw)
		}
	}
}
