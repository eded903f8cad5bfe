package shards_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/musterhq/muster/hub/shards"
)

func TestKey(t *testing.T) {
	if shards.Key("m1", "") != "m1" || shards.Key("m1", "a") != "a/m1" {
		t.Errorf("Key: %q, %q", shards.Key("m1", ""), shards.Key("m1", "a"))
	}
}

// TestWorkNameIsValidAndNeverShared: whatever the owner's namespace and name (a name may
// be a 253-character DNS subdomain with dots), the Work name is a DNS label the API server
// takes and a label value, readable from its start, the same on every call; and owners
// whose fields join alike still get Works of their own.
func TestWorkNameIsValidAndNeverShared(t *testing.T) {
	longest := strings.Repeat(strings.Repeat("a", 62)+".", 5)[:253]
	tests := []struct {
		what                          string
		kind, namespace, name, subset string
		wantPrefix                    string
		// notAs is another owner whose fields join alike.
		notAs []string
	}{
		{what: "a short BroadcastJob shard", kind: "broadcastjob", namespace: "team-a", name: "prefetch", wantPrefix: "broadcastjob-team-a-prefetch-"},
		{what: "a short FleetJob subset shard", kind: "fleetjob", namespace: "team-a", name: "render", subset: "spot", wantPrefix: "fleetjob-team-a-render-spot-",
			notAs: []string{"fleetjob", "team-a", "render-spot", ""}},
		{what: "FleetJob b-c in namespace a", kind: "fleetjob", namespace: "a", name: "b-c", wantPrefix: "fleetjob-a-b-c-", notAs: []string{"fleetjob", "a-b", "c", ""}},
		{what: "a subset that joins as another FleetJob's", kind: "fleetjob", namespace: "ns", name: "a", subset: "b-c", notAs: []string{"fleetjob", "ns", "a-b", "c"}},
		{what: "a FleetJob and a BroadcastJob of one name", kind: "fleetjob", namespace: "ns", name: "x", notAs: []string{"broadcastjob", "ns", "x", ""}},
		{what: "the longest name a BroadcastJob can have", kind: "broadcastjob", namespace: strings.Repeat("n", 63), name: longest, wantPrefix: "broadcastjob-nnn",
			notAs: []string{"broadcastjob", strings.Repeat("n", 63), longest[:252] + "b", ""}},
		{what: "a cut that ends on a dot", kind: "broadcastjob", namespace: "ns", name: strings.Repeat("a", 30) + "." + strings.Repeat("b", 20)},
	}
	for _, tc := range tests {
		t.Run(tc.what, func(t *testing.T) {
			got := shards.WorkName(tc.kind, tc.namespace, tc.name, tc.subset)
			if !strings.HasPrefix(got, tc.wantPrefix) {
				t.Errorf("WorkName = %q, want it to start with %q", got, tc.wantPrefix)
			}
			if errs := append(validation.IsDNS1123Label(got), validation.IsValidLabelValue(got)...); len(errs) > 0 {
				t.Errorf("WorkName = %q is not a valid Work name and label value: %v", got, errs)
			}
			if again := shards.WorkName(tc.kind, tc.namespace, tc.name, tc.subset); again != got {
				t.Errorf("WorkName changes between calls: %q, then %q", got, again)
			}
			if tc.notAs != nil {
				if other := shards.WorkName(tc.notAs[0], tc.notAs[1], tc.notAs[2], tc.notAs[3]); other == got {
					t.Errorf("%q is also the Work name of %q", got, tc.notAs)
				}
			}
		})
	}
}
