package broadcastjob

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestDecideFleetEnd(t *testing.T) {
	failFast := func(j *musterv1.BroadcastJob) { j.Spec.FailurePolicy.Type = musterv1.FailureFailFast }
	continuePolicy := func(j *musterv1.BroadcastJob) { j.Spec.FailurePolicy.Type = musterv1.FailureContinue }
	pausePolicy := func(j *musterv1.BroadcastJob) { j.Spec.FailurePolicy.Type = musterv1.FailurePause }
	never := func(j *musterv1.BroadcastJob) { j.Spec.CompletionPolicy.Type = musterv1.CompletionNever }
	deadlineSeconds := func(d int64) func(*musterv1.BroadcastJob) {
		return func(j *musterv1.BroadcastJob) { j.Spec.CompletionPolicy.ActiveDeadlineSeconds = &d }
	}
	done := func(name string) cluster {
		return cluster{name: name, eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobCompleted, 2, 0, 2, 0, nil)}
	}
	shardFailed := cluster{name: "b", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobFailedPh, 2, 0, 1, 1, nil)}
	stillRunning := cluster{name: "b", eligible: true, hasShard: true, reported: reported(musterv1.BroadcastJobRunning, 2, 1, 1, 0, nil)}

	cases := []struct {
		name        string
		job         *musterv1.BroadcastJob
		started     time.Duration // how long before now the job started
		clusters    []cluster
		wantReason  string // empty: the job goes on
		wantMessage string // a part of the ending's message
		wantRequeue time.Duration
	}{
		{name: "a failure under FailFast fails the job, naming the cluster and the pod's failure", job: hubJob(failFast),
			clusters:   []cluster{done("a"), shardFailed},
			wantReason: musterv1.BroadcastJobReasonPodFailed, wantMessage: "a pod failed in cluster b (failurePolicy FailFast): pod x failed"},
		{name: "a failure under Continue waits for the other clusters", job: hubJob(continuePolicy),
			clusters: []cluster{shardFailed, stillRunning}},
		{name: "every cluster done with a failure under Continue completes the job", job: hubJob(continuePolicy),
			clusters:   []cluster{done("a"), shardFailed},
			wantReason: musterv1.BroadcastJobReasonCompleted, wantMessage: "3 pods succeeded, 1 failed across 2 clusters (failurePolicy Continue)"},
		{name: "every cluster done with a failure under Pause (resumed) fails the job", job: hubJob(pausePolicy),
			clusters:   []cluster{done("a"), shardFailed},
			wantReason: musterv1.BroadcastJobReasonPodsFailed, wantMessage: "1 of 4 pods failed across 2 clusters"},
		{name: "past the deadline the job fails even with every cluster done", job: hubJob(deadlineSeconds(60)), started: 2 * time.Minute,
			clusters:   []cluster{done("a")},
			wantReason: musterv1.BroadcastJobReasonDeadlineExceeded, wantMessage: "activeDeadlineSeconds (60s)"},
		{name: "every cluster done before the deadline completes, and the deadline still requeues", job: hubJob(deadlineSeconds(60)), started: 20 * time.Second,
			clusters:   []cluster{done("a"), done("b")},
			wantReason: musterv1.BroadcastJobReasonCompleted, wantMessage: "4 pods succeeded across 2 clusters", wantRequeue: 40 * time.Second},
		{name: "a job before its deadline goes on and looks again when it passes", job: hubJob(deadlineSeconds(60)),
			clusters: []cluster{done("a"), stillRunning}, wantRequeue: time.Minute},
		{name: "a deadline too long for a Duration never passes", job: hubJob(deadlineSeconds(math.MaxInt64)), started: 1000 * time.Hour,
			clusters: []cluster{stillRunning}},
		{name: "a cluster whose agent has not reported yet holds up completion", job: hubJob(),
			clusters: []cluster{done("a"), {name: "b", eligible: true, hasShard: true, inventoryDesired: 2}}},
		{name: "no cluster to run on: the job waits for one rather than completing", job: hubJob()},
		{name: "completionPolicy Never goes on after every cluster is done", job: hubJob(never), clusters: []cluster{done("a")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fleet := countFleet(tc.clusters)
			status := musterv1.BroadcastJobStatus{StartTime: &metav1.Time{Time: t0.Add(-tc.started)}, BroadcastCounts: fleet.totals}
			end, requeue := decideFleetEnd(fleetObserved{job: tc.job, clusters: tc.clusters, now: t0}, status, fleet)
			gotReason, gotMessage := "", ""
			if end != nil {
				gotReason, gotMessage = end.reason, end.message
			}
			if gotReason != tc.wantReason || !strings.Contains(gotMessage, tc.wantMessage) {
				t.Errorf("end = %q %q, want %q containing %q", gotReason, gotMessage, tc.wantReason, tc.wantMessage)
			}
			if requeue != tc.wantRequeue {
				t.Errorf("requeueAfter = %s, want %s", requeue, tc.wantRequeue)
			}
		})
	}
}

func TestPlanShards(t *testing.T) {
	fresh := []*cluster{{name: "a", eligible: true, inventoryDesired: 4}, {name: "b", eligible: true, inventoryDesired: 4}}
	cases := []struct {
		name    string
		running []*cluster
		budget  *int32
		paused  bool
		want    map[string]shardSpec
	}{
		{name: "without parallelism each cluster's shard runs unbounded", running: fresh,
			want: map[string]shardSpec{"a": {}, "b": {}}},
		{name: "the fleet's parallelism is shared between the clusters", running: fresh, budget: ptr(4),
			want: map[string]shardSpec{"a": {parallelism: ptr(2)}, "b": {parallelism: ptr(2)}}},
		{name: "a paused job pauses every cluster's shard", running: fresh, paused: true,
			want: map[string]shardSpec{"a": {paused: true}, "b": {paused: true}}},
		{name: "no cluster to run on plans no shard", want: map[string]shardSpec{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := planShards(tc.running, tc.budget, tc.paused)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(shardSpec{})); diff != "" {
				t.Errorf("planShards (-want +got):\n%s", diff)
			}
		})
	}
}
