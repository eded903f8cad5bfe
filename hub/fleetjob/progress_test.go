package fleetjob

import (
	"testing"

	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestProgress(t *testing.T) {
	cases := []struct {
		name         string
		fj           *musterv1.FleetJob
		shards       []shardState
		succeeded    int32
		wantProgress string
		wantClusters int32
	}{
		{"no shards yet shows the template's completions", fleetJob(musterv1.PlacementDivided, 2, 5), nil, 0, "0/5", 0},
		{"work queue without shards wants one success", fleetJob(musterv1.PlacementSingle, 2, 0, workQueue), nil, 0, "0/1", 0},
		{"divided shares sum to the template's completions", fleetJob(musterv1.PlacementDivided, 4, 10), []shardState{
			{shard: shard{cluster: "a", completions: ptr.To[int32](6)}}, {shard: shard{cluster: "b", completions: ptr.To[int32](4)}},
		}, 3, "3/10", 2},
		{"duplicate counts every cluster's copy", fleetJob(musterv1.PlacementDuplicate, 1, 2), []shardState{
			{shard: shard{cluster: "a", completions: ptr.To[int32](2)}}, {shard: shard{cluster: "b", completions: ptr.To[int32](2)}}, {shard: shard{cluster: "c", completions: ptr.To[int32](2)}},
		}, 0, "0/6", 3},
		{"shards without completions count one each", fleetJob(musterv1.PlacementDuplicate, 2, 0, workQueue), []shardState{
			{shard: shard{cluster: "a"}}, {shard: shard{cluster: "b"}},
		}, 1, "1/2", 2},
		{"two subsets in one cluster are one cluster", fleetJob(musterv1.PlacementDivided, 4, 4), []shardState{
			{shard: shard{cluster: "a", subset: "x", completions: ptr.To[int32](2)}}, {shard: shard{cluster: "a", subset: "y", completions: ptr.To[int32](2)}},
		}, 4, "4/4", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, clusters := progress(tc.fj, tc.shards, tc.succeeded)
			if got != tc.wantProgress || clusters != tc.wantClusters {
				t.Errorf("progress %q over %d clusters, want %q over %d", got, clusters, tc.wantProgress, tc.wantClusters)
			}
		})
	}
}
