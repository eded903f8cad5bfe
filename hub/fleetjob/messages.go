package fleetjob

import (
	"fmt"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/api/workloadspread"
	"github.com/musterhq/muster/placement/clusters"
)

// placedMessage says where a placement put the shards: "placed 2 shards (Divided) in
// clusters member1 and member2". The cluster list is capped (clusters.MaxListed).
func placedMessage(mode musterv1.PlacementMode, names []string) string {
	how := ""
	if mode != "" {
		how = fmt.Sprintf(" (%s)", mode)
	}
	where := "cluster "
	if len(names) != 1 {
		where = "clusters "
	}
	return fmt.Sprintf("placed %s%s in %s%s", clusters.Count(len(names), "shard"), how, where, clusters.Names(names))
}

// spreadPlacedMessage says where a WorkloadSpread put the shards: "WorkloadSpread ws
// placed 2 shards: subset a in cluster m1 and subset b in cluster m2".
func spreadPlacedMessage(spread string, described []string) string {
	if len(described) == 0 {
		return fmt.Sprintf("WorkloadSpread %s placed no shard", spread)
	}
	return fmt.Sprintf("WorkloadSpread %s placed %s: %s", spread, clusters.Count(len(described), "shard"), clusters.Names(described))
}

// shardsFailedMessage names the failed shards, capped: "the shards in cluster m1 and
// cluster m2 failed".
func shardsFailedMessage(described []string) string {
	return fmt.Sprintf("the shards in %s failed", clusters.Names(described))
}

// troubledClusters names, for a log line, the clusters whose shards a ShardsApplied or
// PodsSchedulable condition of type condType complains about, capped.
func troubledClusters(states []shardState, condType string) string {
	var names []string
	for _, s := range states {
		switch {
		case condType == musterv1.FleetJobShardsApplied && s.applyError != "",
			condType == musterv1.FleetJobPodsSchedulable && workloadspread.WaitingCondition(s.status) != nil:
			names = append(names, s.key())
		}
	}
	return clusters.Names(names)
}
