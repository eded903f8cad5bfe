package broadcastjob

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bcj "github.com/musterhq/muster/api/broadcastjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/placement/clusters"
)

// TestDueEvictions: a shard leaves a cluster by the taint manager's rules, with the hub's
// default toleration for a job that has none; a finished shard, or one already
// withdrawn, stays where it is.
func TestDueEvictions(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	tainted := func(name string, added time.Duration) *musterv1.MemberCluster {
		return &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: musterv1.MemberClusterSpec{Taints: []corev1.Taint{{
			Key: musterv1.UnreachableTaintKey, Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: now.Add(-added)},
		}}}}
	}
	running := reported(musterv1.BroadcastJobRunning, 2, 2, 0, 0, nil)
	members := map[string]*musterv1.MemberCluster{"old": tainted("old", 400*time.Second), "new": tainted("new", 100*time.Second), "ok": {ObjectMeta: metav1.ObjectMeta{Name: "ok"}}}
	policy := clusters.EvictionPolicy{Since: now.Add(-time.Hour), UnreachableTolerationSeconds: 300}
	cases := []struct {
		name     string
		job      *musterv1.BroadcastJob
		clusters []cluster
		due      []string
		next     time.Duration
	}{
		{name: "past the default 300s the shard goes; within it, it is due later",
			job:      hubJob(),
			clusters: []cluster{{name: "old", hasShard: true, reported: running}, {name: "new", hasShard: true, reported: running}, {name: "ok", hasShard: true}},
			due:      []string{"old"}, next: 200 * time.Second},
		{name: "a toleration without seconds keeps it for ever",
			job: hubJob(func(j *musterv1.BroadcastJob) {
				j.Spec.Placement.Tolerations = []corev1.Toleration{{Key: musterv1.UnreachableTaintKey, Operator: corev1.TolerationOpExists}}
			}),
			clusters: []cluster{{name: "old", hasShard: true, reported: running}}},
		{name: "a finished shard and a withdrawn one stay",
			job:      hubJob(),
			clusters: []cluster{{name: "old", hasShard: true, reported: reported(musterv1.BroadcastJobCompleted, 2, 0, 2, 0, nil)}, {name: "new", hasShard: true, withdrawn: true}}},
		{name: "a cluster without a shard has nothing to leave",
			job:      hubJob(),
			clusters: []cluster{{name: "old", eligible: false}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			due, next := dueEvictions(tc.job, tc.clusters, members, policy, now)
			if got := slices.Sorted(maps.Keys(due)); !slices.Equal(got, tc.due) {
				t.Errorf("due %v, want %v", got, tc.due)
			}
			var after time.Duration
			if !next.IsZero() {
				after = next.Sub(now)
			}
			if after != tc.next {
				t.Errorf("next due in %v, want %v", after, tc.next)
			}
		})
	}
}

// TestAnEvictedClusterStopsCounting: the evicted cluster's nodes no longer count as
// desired, its entry says why, and the job completes on the rest.
func TestAnEvictedClusterStopsCounting(t *testing.T) {
	evicted := &musterv1.ShardEviction{Reason: musterv1.BroadcastJobReasonShardEvicted, Message: "gone", WorkUID: "w2"}
	o := fleetObserved{job: hubJob(), now: time.Now(), clusters: []cluster{
		{name: "a", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobCompleted, 2, 0, 2, 0, nil)},
		{name: "b", hasShard: true, reported: reported(musterv1.BroadcastJobRunning, 3, 3, 0, 0, nil), evicted: evicted},
	}}
	p := decideFleet(o)
	if !bcj.Finished(&p.status) || p.status.Desired != 2 || p.status.Succeeded != 2 || p.status.Active != 0 {
		t.Errorf("status %+v finished=%v; want the job complete on a alone (2 desired, 2 succeeded)", p.status.BroadcastCounts, bcj.Finished(&p.status))
	}
	var entries []string
	for _, c := range p.status.Clusters {
		entries = append(entries, fmt.Sprintf("%s:%s:%d", c.ClusterName, c.Phase, c.Desired))
	}
	if want := []string{"a:Completed:2", "b:Evicted:3"}; !slices.Equal(entries, want) {
		t.Errorf("entries %v, want %v", entries, want)
	}
	if _, ok := p.shards["b"]; ok {
		t.Error("the evicted cluster's shard is still planned")
	}
	// A later round keeps the entry (the latest few) while the Work goes.
	o.job.Status = p.status
	o.clusters[1].evicted, o.clusters[1].withdrawn = nil, true
	if got := decideFleet(o).status.Clusters; len(got) != 2 || got[1].Eviction == nil || got[1].Eviction.WorkUID != "w2" {
		t.Errorf("the next round's entries %+v lost the eviction", got)
	}
	if n := len(evictedEntries(slices.Repeat([]musterv1.ClusterBroadcastStatus{{Phase: musterv1.BroadcastJobEvicted, Parallelism: ptr(1)}}, 20), nil, nil)); n != maxEvicted {
		t.Errorf("%d evicted entries kept, want the latest %d", n, maxEvicted)
	}
	// Once its Work is gone and it is eligible again, b runs a shard again: its list
	// entry is that shard's, never two entries of one cluster, which the API server refuses.
	o.job.Status = decideFleet(o).status
	o.clusters[1] = cluster{name: "b", eligible: true}
	entries = nil
	for _, c := range decideFleet(o).status.Clusters {
		entries = append(entries, fmt.Sprintf("%s:%s", c.ClusterName, c.Phase))
	}
	if want := []string{"a:Completed", "b:Pending"}; !slices.Equal(entries, want) {
		t.Errorf("entries once b came back %v, want %v", entries, want)
	}
	// Evicted twice: the latest eviction alone.
	again := &musterv1.ShardEviction{Reason: musterv1.BroadcastJobReasonShardEvicted, Message: "gone again", WorkUID: "w3"}
	got := evictedEntries([]musterv1.ClusterBroadcastStatus{{ClusterName: "b", Phase: musterv1.BroadcastJobEvicted, Eviction: evicted}},
		[]cluster{{name: "b", hasShard: true, evicted: again}}, nil)
	if len(got) != 1 || got[0].Eviction.WorkUID != "w3" {
		t.Errorf("entries after a second eviction of b %+v, want its latest alone", got)
	}
}
