package fleetjob

import (
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// workQueue leaves completions unset.
func workQueue(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.Completions = nil }

func fleetJob(mode musterv1.PlacementMode, parallelism, completions int32, mutate ...func(*musterv1.FleetJob)) *musterv1.FleetJob {
	fj := &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: "fj", Namespace: "ns", UID: "u1"},
		Spec: musterv1.FleetJobSpec{
			Placement: musterv1.FleetJobPlacement{Mode: mode},
			Template:  batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Parallelism: ptr.To(parallelism), Completions: ptr.To(completions)}},
		},
	}
	for _, m := range mutate {
		m(fj)
	}
	return fj
}

func describe(shards []shard) []string {
	var out []string
	for _, s := range shards {
		d := s.cluster + " p=" + itoa(s.parallelism) + " c=" + itoa(s.completions)
		if s.indexes != nil {
			d += " [" + itoa(&s.indexes.Start) + "," + itoa(&s.indexes.End) + ")"
		}
		out = append(out, d)
	}
	return out
}

func itoa(p *int32) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprintf("%02d", *p)
}

func TestPlace(t *testing.T) {
	indexed := func(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion) }
	weights := func(ws ...musterv1.ClusterWeight) func(*musterv1.FleetJob) {
		return func(fj *musterv1.FleetJob) { fj.Spec.Placement.Division = &musterv1.Division{Weights: ws} }
	}
	cases := []struct {
		name     string
		fj       *musterv1.FleetJob
		eligible []string
		fit      map[string]int
		want     []string
	}{
		{"single picks the cluster where most nodes fit", fleetJob(musterv1.PlacementSingle, 2, 4), []string{"a", "b"}, map[string]int{"a": 3, "b": 5}, []string{"b p=02 c=04"}},
		{"single ties go to the first", fleetJob(musterv1.PlacementSingle, 2, 4), []string{"a", "b"}, nil, []string{"a p=02 c=04"}},
		{"duplicate runs the whole job everywhere", fleetJob(musterv1.PlacementDuplicate, 2, 4), []string{"a", "b"}, nil, []string{"a p=02 c=04", "b p=02 c=04"}},
		{"divided by capacity", fleetJob(musterv1.PlacementDivided, 4, 20), []string{"a", "b"}, map[string]int{"a": 1, "b": 3}, []string{"a p=01 c=05", "b p=03 c=15"}},
		{"divided evenly without inventory", fleetJob(musterv1.PlacementDivided, 4, 20, indexed), []string{"a", "b"}, nil, []string{"a p=02 c=10 [00,10)", "b p=02 c=10 [10,20)"}},
		{"divided by weights; unweighted clusters get nothing", fleetJob(musterv1.PlacementDivided, 3, 9, indexed, weights(musterv1.ClusterWeight{ClusterName: "a", Weight: 2}, musterv1.ClusterWeight{ClusterName: "c", Weight: 1})),
			[]string{"a", "b", "c"}, nil, []string{"a p=02 c=06 [00,06)", "c p=01 c=03 [06,09)"}},
		{"a shard with completions runs at least one pod", fleetJob(musterv1.PlacementDivided, 1, 10), []string{"a", "b"}, nil, []string{"a p=01 c=05", "b p=01 c=05"}},
		{"divided parallelism 0 runs nothing, as the built-in Job", fleetJob(musterv1.PlacementDivided, 0, 10), []string{"a", "b"}, nil, []string{"a p=00 c=05", "b p=00 c=05"}},
		{"divided work queue of parallelism 0 keeps a shard in every cluster", fleetJob(musterv1.PlacementDivided, 0, 0, workQueue), []string{"a", "b"}, nil, []string{"a p=00 c=nil", "b p=00 c=nil"}},
		{"nothing eligible", fleetJob(musterv1.PlacementDuplicate, 1, 1), nil, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := describe(place(tc.fj, tc.eligible, tc.fit))
			if len(got) != len(tc.want) {
				t.Fatalf("place = %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("shard %d = %q, want %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func jobStatus(active, succeeded, failed int32, completed string, conds ...batchv1.JobConditionType) *batchv1.JobStatus {
	s := &batchv1.JobStatus{Active: active, Succeeded: succeeded, Failed: failed, CompletedIndexes: completed}
	for _, c := range conds {
		s.Conditions = append(s.Conditions, batchv1.JobCondition{Type: c, Status: corev1.ConditionTrue, Reason: "R", Message: "m"})
	}
	return s
}

func TestSummarize(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	a := shard{cluster: "a", completions: ptr.To[int32](10), indexes: &musterv1.IndexRange{Start: 0, End: 10}}
	b := shard{cluster: "b", completions: ptr.To[int32](10), indexes: &musterv1.IndexRange{Start: 10, End: 20}}
	cases := []struct {
		name      string
		fj        *musterv1.FleetJob
		shards    []shardState
		wantPhase musterv1.JobPhase
		wantStop  []string
		wantIdx   []string
	}{
		{"not reported yet", fleetJob(musterv1.PlacementDivided, 2, 20), []shardState{{shard: a}, {shard: b}}, musterv1.JobPending, nil, []string{"", ""}},
		{"running, indexes made fleet-wide", fleetJob(musterv1.PlacementDivided, 2, 20), []shardState{
			{shard: a, status: jobStatus(1, 3, 0, "0-2")}, {shard: b, status: jobStatus(1, 2, 0, "0,1")},
		}, musterv1.JobRunning, nil, []string{"0-2", "10,11"}},
		{"every shard complete", fleetJob(musterv1.PlacementDivided, 2, 20), []shardState{
			{shard: a, status: jobStatus(0, 10, 0, "0-9", batchv1.JobComplete)}, {shard: b, status: jobStatus(0, 10, 0, "0-9", batchv1.JobComplete)},
		}, musterv1.JobComplete, nil, []string{"0-9", "10-19"}},
		{"FailFast stops the others", fleetJob(musterv1.PlacementDivided, 2, 20), []shardState{
			{shard: a, status: jobStatus(0, 1, 1, "0", batchv1.JobFailed)}, {shard: b, status: jobStatus(1, 2, 0, "0,1")},
		}, musterv1.JobFailed, []string{"b"}, []string{"0", "10,11"}},
		{"Continue waits for the others", fleetJob(musterv1.PlacementDivided, 2, 20, func(fj *musterv1.FleetJob) { fj.Spec.ShardFailurePolicy = musterv1.ShardContinue }), []shardState{
			{shard: a, status: jobStatus(0, 1, 1, "0", batchv1.JobFailed)}, {shard: b, status: jobStatus(1, 2, 0, "0,1")},
		}, musterv1.JobRunning, nil, []string{"0", "10,11"}},
		{"Continue ends Failed when all finished", fleetJob(musterv1.PlacementDivided, 2, 20, func(fj *musterv1.FleetJob) { fj.Spec.ShardFailurePolicy = musterv1.ShardContinue }), []shardState{
			{shard: a, status: jobStatus(0, 1, 1, "0", batchv1.JobFailed)}, {shard: b, status: jobStatus(0, 10, 0, "0-9", batchv1.JobComplete)},
		}, musterv1.JobFailed, nil, []string{"0", "10-19"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, stop := summarize(tc.fj, tc.shards, false, now)
			if status.Phase != tc.wantPhase {
				t.Errorf("phase %s, want %s (%+v)", status.Phase, tc.wantPhase, status.Conditions)
			}
			if len(stop) != len(tc.wantStop) || (len(stop) > 0 && stop[0] != tc.wantStop[0]) {
				t.Errorf("stop %v, want %v", stop, tc.wantStop)
			}
			for i, c := range status.Clusters {
				if c.CompletedIndexes != tc.wantIdx[i] {
					t.Errorf("cluster %s completedIndexes %q, want %q", c.ClusterName, c.CompletedIndexes, tc.wantIdx[i])
				}
			}
			if finished := meta.IsStatusConditionTrue(status.Conditions, musterv1.FleetJobComplete) || meta.IsStatusConditionTrue(status.Conditions, musterv1.FleetJobFailed); finished != (status.CompletionTime != nil) {
				t.Errorf("completionTime %v with conditions %+v", status.CompletionTime, status.Conditions)
			}
		})
	}
}

// A job over more clusters than the status lists keeps the unfinished shards in it and
// counts the rest, while its totals still add up every shard.
func TestSummarizeBoundsTheClustersListed(t *testing.T) {
	const clusters = musterv1.MaxClusterStatuses + 20
	var states []shardState
	for i := range clusters {
		s := shardState{shard: shard{cluster: fmt.Sprintf("c%03d", i), completions: ptr.To[int32](1)}, status: jobStatus(0, 1, 0, "", batchv1.JobComplete)}
		if i >= clusters-10 {
			s.status = jobStatus(1, 0, 0, "")
		}
		states = append(states, s)
	}
	status, _ := summarize(fleetJob(musterv1.PlacementDuplicate, 1, 1), states, false, time.Now())
	if len(status.Clusters) != musterv1.MaxClusterStatuses || status.ClustersOmitted != 20 {
		t.Fatalf("%d clusters listed, %d omitted; want %d and 20", len(status.Clusters), status.ClustersOmitted, musterv1.MaxClusterStatuses)
	}
	running := 0
	for i, c := range status.Clusters {
		if c.Phase == musterv1.JobRunning {
			running++
		}
		if i > 0 && c.ClusterName < status.Clusters[i-1].ClusterName {
			t.Errorf("cluster %s listed after %s: the entries lost their order", c.ClusterName, status.Clusters[i-1].ClusterName)
		}
	}
	if running != 10 || status.Active != 10 || status.Succeeded != clusters-10 {
		t.Errorf("%d running listed, totals %d active and %d succeeded; want 10 listed, 10 and %d", running, status.Active, status.Succeeded, clusters-10)
	}
}

func TestShardConditions(t *testing.T) {
	a, b := shard{cluster: "a"}, shard{cluster: "b", subset: "s"}
	unschedulable := &batchv1.JobStatus{Active: 2, Conditions: []batchv1.JobCondition{{
		Type: musterv1.JobPodsUnschedulable, Status: corev1.ConditionTrue, Message: "2 pods cannot be scheduled: 0/3 nodes are available",
	}}}
	cases := []struct {
		name            string
		shards          []shardState
		wantApplied     string
		wantSchedulable string
		wantNews        []string
	}{
		{"no shard: no condition", nil, "", "", nil},
		{"a refused shard", []shardState{{shard: a, applied: true, status: &batchv1.JobStatus{}}, {shard: b, applyError: "quota exceeded"}},
			"False ApplyFailed subset s in cluster b: quota exceeded", "", []string{"ApplyFailed"}},
		{"waiting pods", []shardState{{shard: a, applied: true, status: unschedulable}},
			"True Applied the member clusters applied every shard (1)", "False Unschedulable cluster a: 2 pods cannot be scheduled: 0/3 nodes are available", []string{"Unschedulable"}},
		{"an agent has not reported", []shardState{{shard: a}},
			"Unknown Applying waiting for the agent to apply the shard in cluster a", "", nil},
	}
	show := func(c *metav1.Condition) string {
		if c == nil {
			return ""
		}
		return fmt.Sprintf("%s %s %s", c.Status, c.Reason, c.Message)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var status musterv1.FleetJobStatus
			news := shardConditions(&status, nil, tc.shards, 1)
			if got := show(meta.FindStatusCondition(status.Conditions, musterv1.FleetJobShardsApplied)); got != tc.wantApplied {
				t.Errorf("ShardsApplied %q, want %q", got, tc.wantApplied)
			}
			if got := show(meta.FindStatusCondition(status.Conditions, musterv1.FleetJobPodsSchedulable)); got != tc.wantSchedulable {
				t.Errorf("PodsSchedulable %q, want %q", got, tc.wantSchedulable)
			}
			var reasons []string
			for _, c := range news {
				reasons = append(reasons, c.Reason)
			}
			if fmt.Sprint(reasons) != fmt.Sprint(tc.wantNews) {
				t.Errorf("news %v, want %v", reasons, tc.wantNews)
			}
			if again := shardConditions(&status, status.Conditions, tc.shards, 1); len(again) != 0 {
				t.Errorf("the same problems were news again: %+v", again)
			}
		})
	}
}
