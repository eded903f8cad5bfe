package app_test

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// bcjShardWork creates the Work of a hub BroadcastJob's shard in cluster, with the member
// job's status fed back when member is set.
func bcjShardWork(t *testing.T, uid, name, ns, cluster string, member *musterv1.BroadcastJobStatus) {
	t.Helper()
	work := &musterv1.Work{
		ObjectMeta: metav1.ObjectMeta{Name: "broadcastjob-" + name, Namespace: memberNamespace(t, cluster), Labels: map[string]string{
			musterv1.BroadcastJobUIDLabel: uid, musterv1.ClusterNameLabel: cluster,
		}},
		Spec: musterv1.WorkSpec{Manifests: []musterv1.Manifest{{RawExtension: runtime.RawExtension{
			Raw: []byte(`{"apiVersion":"muster.dev/v1alpha1","kind":"BroadcastJob","metadata":{"name":"` + name + `","namespace":"` + ns + `"}}`),
		}}}},
	}
	create(t, work)
	if member == nil {
		return
	}
	raw, _ := json.Marshal(member)
	work.Status = musterv1.WorkStatus{
		Conditions: []metav1.Condition{condition(musterv1.WorkApplied, "AppliedManifestWorkComplete", "")},
		Manifests: []musterv1.ManifestStatus{{
			Resource:   musterv1.ResourceIdentifier{Group: "muster.dev", Version: "v1alpha1", Kind: "BroadcastJob", Namespace: ns, Name: name},
			Conditions: []metav1.Condition{condition(musterv1.WorkApplied, "Applied", "")},
			Status:     &runtime.RawExtension{Raw: raw},
		}},
	}
	if err := env.Client.Status().Update(t.Context(), work); err != nil {
		t.Fatal(err)
	}
}

// describe bcj shows a row per cluster and a total with progress as done ÷ desired, the
// shard a member has reported with that member's counts, and the one it has not as such.
func TestDescribeBroadcastJobShowsClustersTotalAndShards(t *testing.T) {
	ns := env.Namespace(t)
	u := sample(t, "broadcastjob", ns, "prefetch")
	var bj musterv1.BroadcastJob
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(u), &bj); err != nil {
		t.Fatal(err)
	}
	c1, c2 := uniqueName("bcj-a"), uniqueName("bcj-b")
	bj.Status = musterv1.BroadcastJobStatus{
		Phase:           musterv1.BroadcastJobRunning,
		BroadcastCounts: musterv1.BroadcastCounts{Desired: 10, Active: 2, Succeeded: 3, Failed: 1},
		Parallelism:     new(int32(3)),
		StartTime:       &metav1.Time{Time: metav1.Now().Add(-90e9)},
		Conditions:      []metav1.Condition{condition(musterv1.BroadcastJobNodesEligible, musterv1.BroadcastJobReasonNodesEligible, "10 nodes")},
		Clusters: []musterv1.ClusterBroadcastStatus{
			{ClusterName: c1, Phase: musterv1.BroadcastJobRunning, BroadcastCounts: musterv1.BroadcastCounts{Desired: 6, Active: 2, Succeeded: 2, Failed: 1}, Parallelism: new(int32(2))},
			{ClusterName: c2, Phase: "", BroadcastCounts: musterv1.BroadcastCounts{}},
		},
	}
	if err := env.Client.Status().Update(t.Context(), &bj); err != nil {
		t.Fatal(err)
	}
	member := &musterv1.BroadcastJobStatus{Phase: musterv1.BroadcastJobRunning, BroadcastCounts: musterv1.BroadcastCounts{Desired: 6, Active: 2, Succeeded: 2, Failed: 1}}
	bcjShardWork(t, string(bj.UID), bj.Name, ns, c1, member)
	bcjShardWork(t, string(bj.UID), bj.Name, ns, c2, nil)

	r := musterctl("describe", "bcj", "prefetch", "-n", ns)
	if r.code != 0 {
		t.Fatalf("describe bcj:\n%s", r)
	}
	for _, line := range []string{
		"Placement: (clusters [member1 member2])",
		"Parallelism: 30%",
		"Paused: false",
		"Phase: Running",
		"Start Time:",
		"CLUSTER PHASE DESIRED ACTIVE SUCCEEDED FAILED PARALLELISM PROGRESS",
		c1 + " Running 6 2 2 1 2 50%",
		c2 + " Pending 0 0 0 0 - -", // nothing desired yet: no progress to show, not 0%
		"TOTAL Running 10 2 3 1 3 40%",
		"BroadcastJob: Running; 6 desired / 2 active / 2 succeeded / 1 failed",
		"Member Status: not reported yet",
	} {
		if !hasLine(r.out, line) {
			t.Errorf("no line %q in:\n%s", line, r.out)
		}
	}
}
