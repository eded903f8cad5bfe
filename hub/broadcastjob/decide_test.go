package broadcastjob

import (
	"fmt"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	bcj "github.com/musterhq/muster/api/broadcastjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func hubJob(mutate ...func(*musterv1.BroadcastJob)) *musterv1.BroadcastJob {
	j := &musterv1.BroadcastJob{
		ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns", UID: "u1", Generation: 1},
		Spec: musterv1.BroadcastJobSpec{
			Placement: &musterv1.Placement{},
			Template:  corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}},
		},
	}
	for _, m := range mutate {
		m(j)
	}
	return j
}

func ptr(v int32) *int32 { return &v }

// reported builds a shard status in phase with counts.
func reported(phase musterv1.BroadcastJobPhase, desired, active, succeeded, failed int32, par *int32) *musterv1.BroadcastJobStatus {
	s := &musterv1.BroadcastJobStatus{Phase: phase, Parallelism: par, BroadcastCounts: musterv1.BroadcastCounts{Desired: desired, Active: active, Succeeded: succeeded, Failed: failed}}
	switch phase {
	case musterv1.BroadcastJobCompleted:
		bcj.SetCondition(s, musterv1.BroadcastJobComplete, metav1.ConditionTrue, musterv1.BroadcastJobReasonCompleted, "")
	case musterv1.BroadcastJobFailedPh:
		bcj.SetCondition(s, musterv1.BroadcastJobFailed, metav1.ConditionTrue, musterv1.BroadcastJobReasonPodFailed, "pod x failed")
	}
	return s
}

func TestDecideFleet(t *testing.T) {
	failFast := func(j *musterv1.BroadcastJob) { j.Spec.FailurePolicy.Type = musterv1.FailureFailFast }
	cases := []struct {
		name       string
		job        *musterv1.BroadcastJob
		clusters   []cluster
		excluded   map[string]int
		wantShards map[string]shardSpec
		wantPause  bool
		wantPhase  musterv1.BroadcastJobPhase
		wantReason string
		wantCounts musterv1.BroadcastCounts
	}{
		{
			name: "a shard for every eligible cluster, desired from the inventory until reported",
			job:  hubJob(),
			clusters: []cluster{
				{name: "a", eligible: true, inventoryDesired: 3},
				{name: "b", eligible: true, inventoryDesired: 2},
				{name: "c", eligible: false, inventoryDesired: 5},
			},
			wantShards: map[string]shardSpec{"a": {}, "b": {}},
			wantPhase:  musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 5},
		},
		{
			name: "fleet parallelism percent divided over the clusters",
			job:  hubJob(func(j *musterv1.BroadcastJob) { j.Spec.Parallelism = new(intstr.FromString("30%")) }),
			clusters: []cluster{
				{name: "a", eligible: true, inventoryDesired: 10},
				{name: "b", eligible: true, inventoryDesired: 10},
			},
			wantShards: map[string]shardSpec{"a": {parallelism: ptr(3)}, "b": {parallelism: ptr(3)}},
			wantPhase:  musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 20},
		},
		{
			name: "a cluster that became unavailable keeps its shard",
			job:  hubJob(),
			clusters: []cluster{
				{name: "a", eligible: false, hasShard: true, reported: reported(musterv1.BroadcastJobRunning, 2, 2, 0, 0, nil)},
				{name: "b", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobRunning, 1, 1, 0, 0, nil)},
			},
			wantShards: map[string]shardSpec{"a": {}, "b": {}},
			wantPhase:  musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 3, Active: 3},
		},
		{
			name: "every shard complete: the fleet job completes",
			job:  hubJob(),
			clusters: []cluster{
				{name: "a", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobCompleted, 2, 0, 2, 0, nil)},
				{name: "b", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobCompleted, 3, 0, 3, 0, nil)},
			},
			wantShards: map[string]shardSpec{"a": {}, "b": {}},
			wantPhase:  musterv1.BroadcastJobCompleted, wantReason: musterv1.BroadcastJobReasonCompleted, wantCounts: musterv1.BroadcastCounts{Desired: 5, Succeeded: 5},
		},
		{
			name: "a cluster with no eligible node does not hold up completion, and is stopped",
			job:  hubJob(),
			clusters: []cluster{
				{name: "a", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobCompleted, 2, 0, 2, 0, nil)},
				{name: "b", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobPending, 0, 0, 0, 0, nil)},
			},
			wantShards: map[string]shardSpec{"a": {}, "b": {terminate: "2 pods succeeded across 2 clusters"}},
			wantPhase:  musterv1.BroadcastJobCompleted, wantReason: musterv1.BroadcastJobReasonCompleted, wantCounts: musterv1.BroadcastCounts{Desired: 2, Succeeded: 2},
		},
		{
			name: "a paused cluster whose nodes are gone but whose pods still run holds up completion",
			job:  hubJob(func(j *musterv1.BroadcastJob) { j.Spec.Paused = true }),
			clusters: []cluster{
				{name: "a", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobCompleted, 2, 0, 2, 0, nil)},
				{name: "b", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobPausedPh, 0, 1, 0, 0, nil)},
			},
			wantShards: map[string]shardSpec{"a": {paused: true}, "b": {paused: true}},
			wantPhase:  musterv1.BroadcastJobPausedPh, wantCounts: musterv1.BroadcastCounts{Desired: 2, Active: 1, Succeeded: 2},
		},
		{
			name: "a cluster not yet reported holds up completion",
			job:  hubJob(),
			clusters: []cluster{
				{name: "a", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobCompleted, 2, 0, 2, 0, nil)},
				{name: "b", eligible: true, inventoryDesired: 1},
			},
			wantShards: map[string]shardSpec{"a": {}, "b": {}},
			wantPhase:  musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 3, Succeeded: 2},
		},
		{
			name: "FailFast: a failure in one cluster stops the others",
			job:  hubJob(failFast),
			clusters: []cluster{
				{name: "a", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobFailedPh, 2, 0, 0, 1, nil)},
				{name: "b", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobRunning, 3, 2, 1, 0, nil)},
			},
			wantShards: map[string]shardSpec{"a": {}, "b": {terminate: "a pod failed in cluster a (failurePolicy FailFast): pod x failed"}},
			// b's running pods, stopped, count as failed, as its agent counts them.
			wantPhase: musterv1.BroadcastJobFailedPh, wantReason: musterv1.BroadcastJobReasonPodFailed, wantCounts: musterv1.BroadcastCounts{Desired: 5, Succeeded: 1, Failed: 3},
		},
		{
			name: "Pause: a new failure anywhere pauses the fleet job",
			job:  hubJob(func(j *musterv1.BroadcastJob) { j.Spec.FailurePolicy.Type = musterv1.FailurePause }),
			clusters: []cluster{
				{name: "a", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobRunning, 2, 1, 0, 1, nil)},
			},
			wantPause:  true,
			wantShards: map[string]shardSpec{"a": {paused: true}},
			wantPhase:  musterv1.BroadcastJobPausedPh, wantCounts: musterv1.BroadcastCounts{Desired: 2, Active: 1, Failed: 1},
		},
		{
			name: "deadline: every unfinished shard is stopped",
			job: hubJob(func(j *musterv1.BroadcastJob) {
				j.Spec.CompletionPolicy.ActiveDeadlineSeconds = new(int64(60))
				j.Status.StartTime = &metav1.Time{Time: t0.Add(-2 * time.Minute)}
			}),
			clusters: []cluster{
				{name: "a", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobCompleted, 1, 0, 1, 0, nil)},
				{name: "b", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobRunning, 3, 3, 0, 0, nil)},
			},
			wantShards: map[string]shardSpec{"a": {}, "b": {terminate: "the job ran longer than activeDeadlineSeconds (60s)"}},
			// b's running pods, stopped, count as failed, as in OpenKruise.
			wantPhase: musterv1.BroadcastJobFailedPh, wantReason: musterv1.BroadcastJobReasonDeadlineExceeded, wantCounts: musterv1.BroadcastCounts{Desired: 4, Succeeded: 1, Failed: 3},
		},
		{
			name: "Continue: every shard done with failures completes the fleet job",
			job:  hubJob(func(j *musterv1.BroadcastJob) { j.Spec.FailurePolicy.Type = musterv1.FailureContinue }),
			clusters: []cluster{
				{name: "a", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobCompleted, 2, 0, 2, 0, nil)},
				{name: "b", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobCompleted, 3, 0, 2, 1, nil)},
			},
			wantShards: map[string]shardSpec{"a": {}, "b": {}},
			wantPhase:  musterv1.BroadcastJobCompleted, wantReason: musterv1.BroadcastJobReasonCompleted, wantCounts: musterv1.BroadcastCounts{Desired: 5, Succeeded: 4, Failed: 1},
		},
		{
			// As OpenKruise: 0 is admitted and fails the job on its first pass.
			name: "activeDeadlineSeconds 0: Failed at once, no shard made",
			job:  hubJob(func(j *musterv1.BroadcastJob) { j.Spec.CompletionPolicy.ActiveDeadlineSeconds = new(int64(0)) }),
			clusters: []cluster{
				{name: "a", eligible: true, inventoryDesired: 3},
			},
			wantShards: map[string]shardSpec{},
			wantPhase:  musterv1.BroadcastJobFailedPh, wantReason: musterv1.BroadcastJobReasonDeadlineExceeded, wantCounts: musterv1.BroadcastCounts{Desired: 3},
		},
		{
			name: "a deadline beyond a Duration's range is never reached, not wrapped into the past",
			job: hubJob(func(j *musterv1.BroadcastJob) {
				j.Spec.CompletionPolicy.ActiveDeadlineSeconds = new(int64(10000000000))
				j.Status.StartTime = &metav1.Time{Time: t0.Add(-2 * time.Minute)}
			}),
			clusters: []cluster{
				{name: "b", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobRunning, 3, 3, 0, 0, nil)},
			},
			wantShards: map[string]shardSpec{"b": {}},
			wantPhase:  musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 3, Active: 3},
		},
		{
			name:      "no cluster matches: Pending with the reasons",
			job:       hubJob(),
			clusters:  []cluster{{name: "a", eligible: false}},
			excluded:  map[string]int{"NotAvailable": 1},
			wantPhase: musterv1.BroadcastJobPending, wantReason: musterv1.ReasonNoEligibleClusters,
			wantShards: map[string]shardSpec{},
		},
		{
			name: "Never: a new cluster gets a shard even when the others are done",
			job:  hubJob(func(j *musterv1.BroadcastJob) { j.Spec.CompletionPolicy.Type = musterv1.CompletionNever }),
			clusters: []cluster{
				{name: "a", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobRunning, 2, 0, 2, 0, nil)},
				{name: "c", eligible: true, inventoryDesired: 4},
			},
			wantShards: map[string]shardSpec{"a": {}, "c": {}},
			wantPhase:  musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 6, Succeeded: 2},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := decideFleet(fleetObserved{job: tc.job, clusters: tc.clusters, excluded: tc.excluded, now: t0})
			if !maps.EqualFunc(p.shards, tc.wantShards, shardSpec.equal) {
				t.Errorf("shards = %+v, want %+v", show(p.shards), show(tc.wantShards))
			}
			if p.pause != tc.wantPause {
				t.Errorf("pause = %v, want %v", p.pause, tc.wantPause)
			}
			if p.status.Phase != tc.wantPhase {
				t.Errorf("phase = %s, want %s (%+v)", p.status.Phase, tc.wantPhase, p.status.Conditions)
			}
			if p.status.BroadcastCounts != tc.wantCounts {
				t.Errorf("counts = %+v, want %+v", p.status.BroadcastCounts, tc.wantCounts)
			}
			if tc.wantReason != "" && !hasReason(p.status.Conditions, tc.wantReason) {
				t.Errorf("no condition with reason %s: %+v", tc.wantReason, p.status.Conditions)
			}
		})
	}
}

func hasReason(conds []metav1.Condition, reason string) bool {
	for _, c := range conds {
		if c.Reason == reason && (c.Status == metav1.ConditionTrue || meta.IsStatusConditionFalse(conds, c.Type)) {
			return true
		}
	}
	return false
}

func show(m map[string]shardSpec) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		par := "nil"
		if v.parallelism != nil {
			par = fmt.Sprint(*v.parallelism)
		}
		out[k] = fmt.Sprintf("parallelism=%s paused=%v terminate=%q", par, v.paused, v.terminate)
	}
	return out
}

func TestShardObject(t *testing.T) {
	job := hubJob(func(j *musterv1.BroadcastJob) {
		j.Spec.FailurePolicy = musterv1.FailurePolicy{Type: musterv1.FailurePause, RestartLimit: 2}
		j.Spec.CompletionPolicy = musterv1.CompletionPolicy{Type: musterv1.CompletionAlways, ActiveDeadlineSeconds: new(int64(60)), TTLSecondsAfterFinished: new(int32(10))}
		j.Spec.Parallelism = new(intstr.FromString("50%"))
	})
	work, err := newWork(job, "member1", shardSpec{parallelism: ptr(4), paused: true})
	if err != nil {
		t.Fatal(err)
	}
	if work.Namespace != "muster-member-member1" || work.Labels[musterv1.BroadcastJobUIDLabel] != "u1" {
		t.Errorf("work %s/%s labels %v", work.Namespace, work.Name, work.Labels)
	}
	back, status, err := readWork(work)
	if err != nil || status != nil {
		t.Fatalf("readWork: %v %v", err, status)
	}
	if !back.equal(shardSpec{parallelism: ptr(4), paused: true}) {
		t.Errorf("round trip = %+v", back)
	}
	shard := shardObject(job, shardSpec{parallelism: ptr(4)})
	switch {
	case shard.Spec.Placement != nil:
		t.Error("the shard keeps the placement, so the agent would ignore it")
	case shard.Spec.FailurePolicy.Type != musterv1.FailureContinue || shard.Spec.FailurePolicy.RestartLimit != 2:
		t.Errorf("failurePolicy %+v: want Continue (the hub pauses) with restartLimit 2", shard.Spec.FailurePolicy)
	case shard.Spec.CompletionPolicy.ActiveDeadlineSeconds != nil || shard.Spec.CompletionPolicy.TTLSecondsAfterFinished != nil:
		t.Error("the shard carries the deadline or TTL the hub applies itself")
	case shard.Spec.Parallelism.IntValue() != 4:
		t.Errorf("parallelism %v, want the share 4", shard.Spec.Parallelism)
	}
}

func TestNoPlacementStatus(t *testing.T) {
	noPlacement := func(j *musterv1.BroadcastJob) { j.Spec.Placement = nil }
	cases := []struct {
		name   string
		job    *musterv1.BroadcastJob
		wantOK bool
	}{
		{"no status yet: the hub says why nothing runs", hubJob(noPlacement), true},
		{"the hub said so already", hubJob(noPlacement, func(j *musterv1.BroadcastJob) {
			bcj.SetCondition(&j.Status, musterv1.BroadcastJobNodesEligible, metav1.ConditionFalse, musterv1.BroadcastJobReasonNoPlacement, "x")
		}), false},
		{"an agent in this cluster runs it", hubJob(noPlacement, func(j *musterv1.BroadcastJob) {
			bcj.SetCondition(&j.Status, musterv1.BroadcastJobNodesEligible, metav1.ConditionTrue, musterv1.BroadcastJobReasonNodesEligible, "3 nodes")
		}), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, ok := noPlacementStatus(tc.job)
			if ok != tc.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tc.wantOK)
			}
			if !ok {
				return
			}
			c := meta.FindStatusCondition(status.Conditions, musterv1.BroadcastJobNodesEligible)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != musterv1.BroadcastJobReasonNoPlacement || status.Phase != musterv1.BroadcastJobPending || status.ObservedGeneration != 1 {
				t.Errorf("status %+v", status)
			}
		})
	}
}

// A job over more clusters than the status lists keeps the clusters with failed pods and
// the unfinished ones in it, counts the rest, and its totals still add up every cluster.
func TestDecideFleetBoundsTheClustersListed(t *testing.T) {
	const n = musterv1.MaxClusterStatuses + 30
	var clusters []cluster
	for i := range n {
		c := cluster{name: fmt.Sprintf("c%03d", i), eligible: true, hasShard: true, applied: true, reported: reported(musterv1.BroadcastJobCompleted, 2, 0, 2, 0, nil)}
		switch {
		case i == 7:
			c.reported = reported(musterv1.BroadcastJobRunning, 2, 1, 0, 1, nil)
		case i >= n-5:
			c.reported = reported(musterv1.BroadcastJobRunning, 2, 2, 0, 0, nil)
		}
		clusters = append(clusters, c)
	}
	continueOnFailure := func(j *musterv1.BroadcastJob) { j.Spec.FailurePolicy.Type = musterv1.FailureContinue }
	status := decideFleet(fleetObserved{job: hubJob(continueOnFailure), clusters: clusters, now: t0}).status
	if len(status.Clusters) != musterv1.MaxClusterStatuses || status.ClustersOmitted != 30 {
		t.Fatalf("%d clusters listed, %d omitted; want %d and 30", len(status.Clusters), status.ClustersOmitted, musterv1.MaxClusterStatuses)
	}
	listed := map[string]bool{}
	for _, c := range status.Clusters {
		listed[c.ClusterName] = true
	}
	for _, want := range []string{"c007", fmt.Sprintf("c%03d", n-1), fmt.Sprintf("c%03d", n-5)} {
		if !listed[want] {
			t.Errorf("cluster %s, failed or unfinished, is not listed", want)
		}
	}
	if status.Desired != 2*n || status.Failed != 1 || status.Active != 11 {
		t.Errorf("totals %+v, want %d desired, 1 failed, 11 active", status.BroadcastCounts, 2*n)
	}
}

func TestDecideFleetReportsRefusedShards(t *testing.T) {
	clusters := []cluster{
		{name: "a", eligible: true, hasShard: true, applied: true, reported: reported(musterv1.BroadcastJobRunning, 2, 1, 0, 0, nil)},
		{name: "b", eligible: true, hasShard: true, applyError: "exceeded quota"},
	}
	p := decideFleet(fleetObserved{job: hubJob(), clusters: clusters, now: t0})
	c := meta.FindStatusCondition(p.status.Conditions, musterv1.BroadcastJobShardsApplied)
	if c == nil || c.Status != metav1.ConditionFalse || c.Message != "cluster b: exceeded quota" || len(p.news) != 1 {
		t.Fatalf("first round: %+v, news %v", c, p.news)
	}
	job := hubJob()
	job.Status = p.status
	if again := decideFleet(fleetObserved{job: job, clusters: clusters, now: t0}); len(again.news) != 0 {
		t.Errorf("the same refusal was news again: %v", again.news)
	}
}

// TestBudgetCountsRunningPodsWhoseNodesAreGone: desired counts only eligible nodes, so a
// cluster's remaining work never drops below the pods it still runs.
func TestBudgetCountsRunningPodsWhoseNodesAreGone(t *testing.T) {
	cases := []struct {
		name     string
		reported *musterv1.BroadcastJobStatus
		want     int32
	}{
		{"nodes to go and pods running", reported(musterv1.BroadcastJobRunning, 5, 2, 1, 0, nil), 4},
		{"paused, every node gone, two pods still running", reported(musterv1.BroadcastJobPausedPh, 0, 2, 0, 0, nil), 2},
		{"finished pods on nodes that are gone", reported(musterv1.BroadcastJobRunning, 1, 1, 2, 0, nil), 1},
		{"finished", reported(musterv1.BroadcastJobCompleted, 2, 0, 2, 0, nil), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := budgetClusters([]*cluster{{name: "a", hasShard: true, reported: tc.reported}})
			if got[0].Remaining != tc.want {
				t.Errorf("remaining = %d, want %d", got[0].Remaining, tc.want)
			}
		})
	}
}

// A job that ends with pods running counts them as failed in the cluster entries too, so
// that the entries add up to the totals.
func TestStoppedPodsCountFailedPerCluster(t *testing.T) {
	job := hubJob(func(j *musterv1.BroadcastJob) {
		j.Spec.CompletionPolicy.ActiveDeadlineSeconds = new(int64(60))
		j.Status.StartTime = &metav1.Time{Time: t0.Add(-2 * time.Minute)}
	})
	p := decideFleet(fleetObserved{job: job, now: t0, clusters: []cluster{
		{name: "a", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobCompleted, 1, 0, 1, 0, nil)},
		{name: "b", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobRunning, 3, 2, 0, 1, nil)},
	}})
	want := map[string]musterv1.BroadcastCounts{"a": {Desired: 1, Succeeded: 1}, "b": {Desired: 3, Failed: 3}}
	for _, c := range p.status.Clusters {
		if c.BroadcastCounts != want[c.ClusterName] {
			t.Errorf("cluster %s: %+v, want %+v", c.ClusterName, c.BroadcastCounts, want[c.ClusterName])
		}
	}
	if len(p.status.Clusters) != 2 {
		t.Errorf("%d cluster entries, want 2", len(p.status.Clusters))
	}
}
