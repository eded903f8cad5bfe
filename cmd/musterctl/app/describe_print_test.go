package app

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

var describeNow = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) *metav1.Time { return &metav1.Time{Time: describeNow.Add(-d)} }

// described is printDescription's output for obj, squashed into cells.
func described(t *testing.T, obj client.Object, in *describeInput) []string {
	t.Helper()
	if in == nil {
		in = &describeInput{}
	}
	in.now = describeNow
	var out bytes.Buffer
	if err := printDescription(&out, obj, in); err != nil {
		t.Fatal(err)
	}
	return squash(out.String())
}

// wantLines fails unless got has every line of want, in that order (others between).
func wantLines(t *testing.T, got []string, want ...string) {
	t.Helper()
	i := 0
	for _, l := range got {
		if i < len(want) && l == want[i] {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("no line %q (in order) in:\n%s", want[i], strings.Join(got, "\n"))
	}
}

func TestDescribeFleetJobWithNothingYet(t *testing.T) {
	fj := &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: "render", Namespace: "batch", CreationTimestamp: *ago(90 * time.Second)},
		Spec:       musterv1.FleetJobSpec{Placement: musterv1.FleetJobPlacement{Mode: musterv1.PlacementDuplicate}, ShardFailurePolicy: musterv1.ShardContinue},
	}
	got := described(t, fj, nil)
	want := []string{
		"Name: render",
		"Namespace: batch",
		"Kind: FleetJob",
		"Labels: <none>",
		"Created: 2026-11-23T11:58:30Z (90s ago)",
		"Placement: Duplicate",
		"Completions: -",
		"Parallelism: -",
		"Shard Failure Policy: Continue",
		"Phase: Pending",
		"Pods: 0 active / 0 succeeded / 0 failed",
		"Conditions: <none>",
		"Clusters: <none>",
		"Shards: <none>",
		"Events: <none>",
	}
	if !cmp.Equal(got, want) {
		t.Errorf("describe of a new FleetJob (-want +got):\n%s", cmp.Diff(want, got))
	}
}

func TestDescribeFleetJobSpreadIndexedAndFinished(t *testing.T) {
	indexed := batchv1.IndexedCompletion
	fj := &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "ml", Labels: map[string]string{"team": "ml"}, CreationTimestamp: *ago(time.Hour)},
		Spec: musterv1.FleetJobSpec{
			Placement: musterv1.FleetJobPlacement{Mode: musterv1.PlacementDivided, Placement: musterv1.Placement{
				ClusterAffinity: musterv1.ClusterAffinity{
					ClusterNames:    []string{"eu-1", "us-1"},
					ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"gpu": "true"}},
				},
			}},
			ShardFailurePolicy: musterv1.ShardFailFast,
			Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Completions: new(int32(4)), Parallelism: new(int32(2)), CompletionMode: &indexed,
			}},
		},
		Status: musterv1.FleetJobStatus{
			Phase: musterv1.JobComplete, Succeeded: 4, StartTime: ago(50 * time.Minute), CompletionTime: ago(20 * time.Minute),
			Conditions: []metav1.Condition{{Type: musterv1.FleetJobComplete, Status: metav1.ConditionTrue, Reason: "Completed", LastTransitionTime: *ago(20 * time.Minute)}},
			Clusters: []musterv1.ClusterJobStatus{
				{ClusterName: "eu-1", Subset: "spot", Phase: musterv1.JobComplete, Completions: new(int32(3)), Indexes: &musterv1.IndexRange{Start: 0, End: 3}, Succeeded: 3, CompletedIndexes: "0-2"},
				{ClusterName: "us-1", Phase: musterv1.JobComplete, Completions: new(int32(1)), Indexes: &musterv1.IndexRange{Start: 3, End: 4}, Succeeded: 1, CompletedIndexes: "3"},
			},
		},
	}
	wantLines(t, described(t, fj, nil),
		"Labels: team=ml",
		"Placement: Divided (clusters [eu-1 us-1], selector gpu=true)",
		"Completions: 4",
		"Parallelism: 2",
		"Completion Mode: Indexed",
		"Shard Failure Policy: FailFast",
		"Phase: Complete",
		"Start Time: 2026-11-23T11:10:00Z (50m ago)",
		"Completion Time: 2026-11-23T11:40:00Z (took 30m)",
		"Pods: 0 active / 4 succeeded / 0 failed",
		"Conditions:",
		"Type Status Reason Age Message",
		"Complete True Completed 20m -",
		"Clusters:",
		"CLUSTER PHASE INDEXES COMPLETIONS ACTIVE SUCCEEDED FAILED COMPLETED-INDEXES",
		"spot@eu-1 Complete 0-2 3 0 3 0 0-2",
		"us-1 Complete 3-3 1 0 1 0 3",
		"TOTAL Complete - 4 0 4 0 -",
	)
}

// A Divided job that failed over shows the part that took over beside the cluster's own
// shard, and the eviction in its history, with when and why.
func TestDescribeFleetJobFailover(t *testing.T) {
	indexed := batchv1.IndexedCompletion
	fj := &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "ml", CreationTimestamp: *ago(time.Hour)},
		Spec: musterv1.FleetJobSpec{
			Placement: musterv1.FleetJobPlacement{Mode: musterv1.PlacementDivided},
			Template:  batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Completions: new(int32(4)), Parallelism: new(int32(2)), CompletionMode: &indexed}},
		},
		Status: musterv1.FleetJobStatus{
			Phase: musterv1.JobRunning, Succeeded: 3, Active: 1,
			Clusters: []musterv1.ClusterJobStatus{
				{ClusterName: "eu-1", Phase: musterv1.JobComplete, Completions: new(int32(2)), Indexes: &musterv1.IndexRange{Start: 0, End: 2}, Succeeded: 2, CompletedIndexes: "0,1"},
				{ClusterName: "eu-1", Part: "abcd1234", Carried: 1, Phase: musterv1.JobRunning, Completions: new(int32(1)), Active: 1},
				{ClusterName: "us-1", Phase: musterv1.JobEvicted, Completions: new(int32(2)), Indexes: &musterv1.IndexRange{Start: 2, End: 4}, Succeeded: 1, CompletedIndexes: "2",
					Eviction: &musterv1.ShardEviction{Time: *ago(5 * time.Minute), Reason: musterv1.FleetJobReasonShardEvicted, Message: "the cluster has taint muster.dev/unreachable:NoExecute"}},
			},
		},
	}
	wantLines(t, described(t, fj, nil),
		"CLUSTER PHASE INDEXES COMPLETIONS ACTIVE SUCCEEDED FAILED COMPLETED-INDEXES",
		"eu-1 Complete 0-1 2 0 2 0 0,1",
		"eu-1 (part abcd1234) Running moved 1 1 0 0 -",
		"us-1 Evicted 2-3 2 0 1 0 2",
		"TOTAL Running - 4 1 3 0 -",
		"Failovers:",
		"AGE CLUSTER REASON MESSAGE",
		"5m us-1 ShardEvicted the cluster has taint muster.dev/unreachable:NoExecute",
	)
}

// A FleetJob over more clusters than its status lists says how many shards it leaves out.
func TestDescribeFleetJobSaysHowManyShardsItsStatusLeavesOut(t *testing.T) {
	fj := &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: "wide", Namespace: "ml", CreationTimestamp: *ago(time.Hour)},
		Spec:       musterv1.FleetJobSpec{Placement: musterv1.FleetJobPlacement{Mode: musterv1.PlacementDuplicate}},
		Status: musterv1.FleetJobStatus{
			Phase: musterv1.JobRunning, Active: 900, ClustersOmitted: 899,
			Clusters: []musterv1.ClusterJobStatus{{ClusterName: "eu-1", Phase: musterv1.JobRunning, Active: 1}},
		},
	}
	wantLines(t, described(t, fj, nil),
		"eu-1 Running - - 1 0 0 -",
		"TOTAL Running - - 900 0 0 -",
		"(899 more shards, counted in the total: the status lists 100, failed and unfinished ones first; every shard is under Shards)",
	)
}

// work is a shard's Work in cluster (subset optional) with the agent's feedback.
func work(cluster, subset string, conds []metav1.Condition, manifests ...musterv1.ManifestStatus) musterv1.Work {
	labels := map[string]string{musterv1.ClusterNameLabel: cluster}
	if subset != "" {
		labels[musterv1.SubsetLabel] = subset
	}
	return musterv1.Work{
		ObjectMeta: metav1.ObjectMeta{Name: "fleetjob-train", Namespace: musterv1.MemberNamespace(cluster), Labels: labels},
		Status:     musterv1.WorkStatus{Conditions: conds, Manifests: manifests},
	}
}

func cond(typ string, status metav1.ConditionStatus, reason, msg string, age time.Duration) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, LastTransitionTime: *ago(age)}
}

// Each shard shows its Work's conditions, the member's refusal of a manifest, and the
// member Job's status as fed back; a status that cannot be read says so instead of
// failing the whole describe.
func TestDescribeFleetJobShards(t *testing.T) {
	jobStatus, _ := json.Marshal(batchv1.JobStatus{Active: 2, Ready: new(int32(1)), Failed: 1})
	fj := &musterv1.FleetJob{ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "ml"}}
	in := &describeInput{works: []musterv1.Work{
		work("us-1", "", []metav1.Condition{cond(musterv1.WorkApplied, metav1.ConditionTrue, "Applied", "", time.Minute)},
			musterv1.ManifestStatus{Status: &runtime.RawExtension{Raw: jobStatus}}),
		work("eu-1", "spot", []metav1.Condition{cond(musterv1.WorkApplied, metav1.ConditionFalse, "ApplyFailed", "1 of 1 manifests failed", 2*time.Minute)},
			musterv1.ManifestStatus{
				Resource:   musterv1.ResourceIdentifier{Kind: "Job", Name: "train"},
				Conditions: []metav1.Condition{cond(musterv1.WorkApplied, metav1.ConditionFalse, "Forbidden", "jobs.batch is forbidden", 2*time.Minute)},
			}),
		work("ap-1", "", nil, musterv1.ManifestStatus{Status: &runtime.RawExtension{Raw: []byte(`{"active":"many"}`)}}),
	}}
	wantLines(t, described(t, fj, in),
		"Shards:",
		"ap-1:",
		"Work: muster-member-ap-1/fleetjob-train",
		"Applied: not reported yet",
		"Available: not reported yet",
		"Job: unreadable status: json: cannot unmarshal string into Go struct field JobStatus.active of type int32",
		"spot@eu-1:",
		"Applied: False (ApplyFailed, 2m ago): 1 of 1 manifests failed",
		"Refused by the member: Job train: jobs.batch is forbidden",
		"Member Status: not reported yet",
		"us-1:",
		"Applied: True (Applied, 60s ago)",
		"Job: 2 active / 1 ready / 0 succeeded / 1 failed",
		"Job Conditions: <none>",
	)
}

// A BroadcastJob's evicted shard shows in its clusters and in its failover history.
func TestDescribeBroadcastJobFailover(t *testing.T) {
	bj := &musterv1.BroadcastJob{
		ObjectMeta: metav1.ObjectMeta{Name: "prefetch", Namespace: "ops"},
		Spec:       musterv1.BroadcastJobSpec{Placement: &musterv1.Placement{}},
		Status: musterv1.BroadcastJobStatus{Phase: musterv1.BroadcastJobCompleted, BroadcastCounts: musterv1.BroadcastCounts{Desired: 2, Succeeded: 2}, Clusters: []musterv1.ClusterBroadcastStatus{
			{ClusterName: "eu-1", Phase: musterv1.BroadcastJobCompleted, BroadcastCounts: musterv1.BroadcastCounts{Desired: 2, Succeeded: 2}},
			{ClusterName: "us-1", Phase: musterv1.BroadcastJobEvicted, BroadcastCounts: musterv1.BroadcastCounts{Desired: 3, Active: 3},
				Eviction: &musterv1.ShardEviction{Time: *ago(2 * time.Minute), Reason: musterv1.BroadcastJobReasonShardEvicted, Message: "the cluster has taint muster.dev/unreachable:NoExecute"}},
		}},
	}
	wantLines(t, described(t, bj, nil),
		"Failovers:",
		"AGE CLUSTER REASON MESSAGE",
		"2m us-1 ShardEvicted the cluster has taint muster.dev/unreachable:NoExecute",
	)
}

func TestDescribeBroadcastJobDefaults(t *testing.T) {
	pct := intstr.FromString("25%")
	for _, tc := range []struct {
		name string
		spec musterv1.BroadcastJobSpec
		want []string
	}{
		{"every node, no placement", musterv1.BroadcastJobSpec{}, []string{"Parallelism: all nodes", "Paused: false", "Phase: Pending", "Conditions: <none>", "Clusters: <none>", "Shards: <none>"}},
		{"paused, a quarter, by selector", musterv1.BroadcastJobSpec{
			Paused: true, Parallelism: &pct,
			Placement: &musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"zone": "eu"}}}},
		}, []string{"Placement: (selector zone=eu)", "Parallelism: 25%", "Paused: true"}},
		{"placement selecting every cluster", musterv1.BroadcastJobSpec{Placement: &musterv1.Placement{}}, []string{"Placement:", "Parallelism: all nodes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bj := &musterv1.BroadcastJob{ObjectMeta: metav1.ObjectMeta{Name: "prefetch", Namespace: "ops"}, Spec: tc.spec}
			got := described(t, bj, nil)
			wantLines(t, got, append([]string{"Kind: BroadcastJob"}, tc.want...)...)
			if tc.spec.Placement == nil && strings.Contains(strings.Join(got, "\n"), "Placement") {
				t.Errorf("a BroadcastJob without placement shows one:\n%s", strings.Join(got, "\n"))
			}
		})
	}
}

func TestDescribeBroadcastJobShardUnreadable(t *testing.T) {
	bj := &musterv1.BroadcastJob{ObjectMeta: metav1.ObjectMeta{Name: "prefetch", Namespace: "ops", UID: "u1"}}
	w := work("eu-1", "", nil, musterv1.ManifestStatus{Status: &runtime.RawExtension{Raw: []byte(`[]`)}})
	wantLines(t, described(t, bj, &describeInput{works: []musterv1.Work{w}}),
		"eu-1:",
		"BroadcastJob: unreadable status: json: cannot unmarshal array into Go value of type v1alpha1.BroadcastJobStatus",
	)
}

// Kinds without shards show their spec and status as YAML, the status's conditions as a
// table, and top-level data (a NodeSlice's cluster) as a field.
func TestDescribeGenericKinds(t *testing.T) {
	mc := &musterv1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "eu-1"},
		Spec:       musterv1.MemberClusterSpec{Accepted: true},
		Status: musterv1.MemberClusterStatus{Conditions: []metav1.Condition{
			cond(musterv1.MemberClusterAvailable, metav1.ConditionFalse, "Unreachable", "no lease for 5m", 3*time.Minute),
		}},
	}
	got := described(t, mc, nil)
	wantLines(t, got,
		"Name: eu-1",
		"Kind: MemberCluster",
		"Spec:",
		"accepted: true",
		"Conditions:",
		"Type Status Reason Age Message",
		"---- ------ ------ --- -------",
		"Available False Unreachable 3m no lease for 5m",
		"Events: <none>",
	)
	if strings.Contains(strings.Join(got, "\n"), "Namespace:") {
		t.Errorf("a cluster-scoped object shows a namespace:\n%s", strings.Join(got, "\n"))
	}
	nsl := &musterv1.NodeSlice{ObjectMeta: metav1.ObjectMeta{Name: "eu-1-0", Namespace: "muster-member-eu-1"}, ClusterName: "eu-1", NodeCount: 2}
	wantLines(t, described(t, nsl, nil), "Name: eu-1-0", "Namespace: muster-member-eu-1", "Kind: NodeSlice", "clusterName: eu-1")
}

func TestConditionSummary(t *testing.T) {
	conds := []metav1.Condition{
		cond("Applied", metav1.ConditionTrue, "", "", 5*time.Minute),
		cond("Available", metav1.ConditionFalse, "NotReady", "0/1 ready", 10*time.Second),
	}
	for typ, want := range map[string]string{
		"Applied":   "True (-, 5m ago)",
		"Available": "False (NotReady, 10s ago): 0/1 ready",
		"Degraded":  "not reported yet",
	} {
		if got := conditionSummary(conds, typ, describeNow); got != want {
			t.Errorf("conditionSummary(%s) = %q, want %q", typ, got, want)
		}
	}
}

func TestWorksByClusterSortsByShard(t *testing.T) {
	part := work("eu-1", "", nil)
	part.Labels[musterv1.PartLabel] = "abcd1234"
	works := []musterv1.Work{work("us-1", "", nil), work("eu-1", "spot", nil), work("eu-1", "", nil), part}
	byKey, keys := worksByCluster(works)
	if want := []string{"eu-1", "eu-1 (part abcd1234)", "spot@eu-1", "us-1"}; !cmp.Equal(keys, want) {
		t.Errorf("keys = %v, want %v", keys, want)
	}
	if byKey["spot@eu-1"] != &works[1] {
		t.Error("spot@eu-1 is not the subset's Work")
	}
	if _, keys := worksByCluster(nil); len(keys) != 0 {
		t.Errorf("no Works: keys %v", keys)
	}
}

func TestPlacementSummary(t *testing.T) {
	sel := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}}
	for _, tc := range []struct {
		name string
		p    musterv1.Placement
		want string
	}{
		{"every cluster", musterv1.Placement{}, ""},
		{"names", musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{"a"}}}, " (clusters [a])"},
		{"selector", musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterSelector: sel}}, " (selector tier in (a,b))"},
		{"empty selector", musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterSelector: &metav1.LabelSelector{}}}, " (selector <none>)"},
	} {
		if got := placementSummary(&tc.p); got != tc.want {
			t.Errorf("%s: placementSummary = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestAgeAndKind(t *testing.T) {
	if got := age(describeNow, metav1.Time{}); got != "<unknown>" {
		t.Errorf("age of no time = %q", got)
	}
	if got := age(describeNow, *ago(49 * time.Hour)); got != "2d1h" {
		t.Errorf("age of 49h = %q", got)
	}
	for obj, want := range map[client.Object]string{&musterv1.FleetJob{}: "FleetJob", &musterv1.Work{}: "Work", &musterv1.FleetCronJob{}: "FleetCronJob"} {
		if got := kindOf(obj); got != want {
			t.Errorf("kindOf(%T) = %q", obj, got)
		}
	}
}
