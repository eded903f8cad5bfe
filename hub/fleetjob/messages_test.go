package fleetjob

import (
	"fmt"
	"testing"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestMessages(t *testing.T) {
	many := make([]string, 10000)
	for i := range many {
		many[i] = fmt.Sprintf("m%05d", i)
	}
	first10 := "m00000, m00001, m00002, m00003, m00004, m00005, m00006, m00007, m00008, m00009"
	for _, tc := range []struct{ name, got, want string }{
		{"single", placedMessage(musterv1.PlacementSingle, many[:1]), "placed 1 shard (Single) in cluster m00000"},
		{"divided", placedMessage(musterv1.PlacementDivided, many[:3]), "placed 3 shards (Divided) in clusters m00000, m00001 and m00002"},
		{"no mode", placedMessage("", many[:2]), "placed 2 shards in clusters m00000 and m00001"},
		{"ten thousand clusters", placedMessage(musterv1.PlacementDuplicate, many), "placed 10000 shards (Duplicate) in clusters " + first10 + " and 9990 more"},
		{"spread", spreadPlacedMessage("ws", []string{"subset a in cluster m1", "subset b in cluster m2"}),
			"WorkloadSpread ws placed 2 shards: subset a in cluster m1 and subset b in cluster m2"},
		{"spread with none", spreadPlacedMessage("ws", nil), "WorkloadSpread ws placed no shard"},
		{"failed", shardsFailedMessage([]string{"cluster a", "cluster b"}), "the shards in cluster a and cluster b failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("\n got %q\nwant %q", tc.got, tc.want)
			}
		})
	}
}
