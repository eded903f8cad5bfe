package shards_test

import (
	"strings"
	"testing"

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
