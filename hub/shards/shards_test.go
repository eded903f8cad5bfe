package shards_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/musterhq/muster/hub/shards"
)

func TestName(t *testing.T) {
	long := strings.Repeat("x", 40)
	tests := []struct {
		parts []string
		check func(string) bool
		what  string
	}{
		{[]string{"fleetjob", "default", "render"}, func(n string) bool { return n == "fleetjob-default-render" }, "short names are joined as they are"},
		{[]string{"fleetjob", long, long}, func(n string) bool { return len(n) == 63 && strings.HasPrefix(n, "fleetjob-xxx") }, "long names are cut to 63 with a hash"},
		{[]string{"fleetjob", long, long + "y"}, func(n string) bool { return n != shards.Name("fleetjob", long, long) }, "distinct long names stay distinct"},
		{[]string{"a", strings.Repeat("b-", 40)}, func(n string) bool { return !strings.Contains(n, "--") && len(n) <= 63 }, "no dash before the hash"},
	}
	for _, tc := range tests {
		if got := shards.Name(tc.parts...); !tc.check(got) {
			t.Errorf("%s: Name(%v) = %q", tc.what, tc.parts, got)
		}
	}
	if shards.Key("m1", "") != "m1" || shards.Key("m1", "a") != "a/m1" {
		t.Errorf("Key: %q, %q", shards.Key("m1", ""), shards.Key("m1", "a"))
	}
}

// TestNameIsAValidStableWorkName: whatever the owner's namespace and name (a name may be
// a 253-character DNS subdomain with dots), the Work name is a DNS subdomain the API
// server takes and a label value, the same on every call; names that fit stay exactly as
// they were, since members already hold objects labelled with them.
func TestNameIsAValidStableWorkName(t *testing.T) {
	longest := strings.Repeat(strings.Repeat("a", 62)+".", 5)[:253]
	tests := []struct {
		what  string
		parts []string
		want  string
	}{
		{what: "a short BroadcastJob shard", parts: []string{"broadcastjob", "team-a", "prefetch"}, want: "broadcastjob-team-a-prefetch"},
		{what: "a short FleetJob subset shard", parts: []string{"fleetjob", "team-a", "render", "spot"}, want: "fleetjob-team-a-render-spot"},
		{what: "exactly 63 characters", parts: []string{"broadcastjob", "ns", strings.Repeat("n", 47)}, want: "broadcastjob-ns-" + strings.Repeat("n", 47)},
		{what: "the longest name a BroadcastJob can have", parts: []string{"broadcastjob", strings.Repeat("n", 63), longest}},
		{what: "a cut that ends on a dot", parts: []string{"broadcastjob", "ns", strings.Repeat("a", 37) + "." + strings.Repeat("b", 20)}},
	}
	for _, tc := range tests {
		got := shards.Name(tc.parts...)
		if tc.want != "" && got != tc.want {
			t.Errorf("%s: Name = %q, want %q unchanged", tc.what, got, tc.want)
		}
		if errs := append(validation.IsDNS1123Subdomain(got), validation.IsValidLabelValue(got)...); len(errs) > 0 {
			t.Errorf("%s: Name = %q is not a valid Work name and label value: %v", tc.what, got, errs)
		}
		if again := shards.Name(tc.parts...); again != got {
			t.Errorf("%s: Name changes between calls: %q, then %q", tc.what, got, again)
		}
	}
}
