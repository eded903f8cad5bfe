package broadcastjob

import (
	"math"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestDecideEnd(t *testing.T) {
	failFast := func(j *musterv1.BroadcastJob) { j.Spec.FailurePolicy.Type = musterv1.FailureFailFast }
	continuePolicy := func(j *musterv1.BroadcastJob) { j.Spec.FailurePolicy.Type = musterv1.FailureContinue }
	pausePolicy := func(j *musterv1.BroadcastJob) { j.Spec.FailurePolicy.Type = musterv1.FailurePause }
	never := func(j *musterv1.BroadcastJob) { j.Spec.CompletionPolicy.Type = musterv1.CompletionNever }
	terminated := func(j *musterv1.BroadcastJob) {
		j.Annotations = map[string]string{musterv1.TerminateAnnotation: "stopped on the hub"}
	}
	deadlineSeconds := func(d int64) func(*musterv1.BroadcastJob) {
		return func(j *musterv1.BroadcastJob) { j.Spec.CompletionPolicy.ActiveDeadlineSeconds = &d }
	}
	allDone := musterv1.BroadcastCounts{Desired: 2, Succeeded: 2}
	running := musterv1.BroadcastCounts{Desired: 2, Active: 1, Failed: 1}
	failed := podOn("n1", corev1.PodFailed)

	cases := []struct {
		name        string
		job         *musterv1.BroadcastJob
		started     time.Duration // how long before now the job started
		counts      musterv1.BroadcastCounts
		firstFailed *corev1.Pod
		missing     int
		wantReason  string // empty: the job goes on
		wantStop    bool
		wantRequeue time.Duration
	}{
		{name: "terminated on the hub wins over a FailFast failure, and stops the pods", job: testJob(terminated, failFast),
			counts: running, firstFailed: failed, wantReason: musterv1.BroadcastJobReasonTerminated, wantStop: true},
		{name: "a failure under FailFast fails the job and stops the pods", job: testJob(failFast),
			counts: running, firstFailed: failed, wantReason: musterv1.BroadcastJobReasonPodFailed, wantStop: true},
		{name: "a failure under Continue does not end a job with pods running", job: testJob(continuePolicy),
			counts: running, firstFailed: failed},
		{name: "past the deadline the job fails even with every node done", job: testJob(deadlineSeconds(60)), started: 2 * time.Minute,
			counts: allDone, wantReason: musterv1.BroadcastJobReasonDeadlineExceeded, wantStop: true},
		{name: "every node done before the deadline completes, and the deadline still requeues", job: testJob(deadlineSeconds(60)), started: 20 * time.Second,
			counts: allDone, wantReason: musterv1.BroadcastJobReasonCompleted, wantRequeue: 40 * time.Second},
		{name: "a job before its deadline goes on and looks again when it passes", job: testJob(deadlineSeconds(60)),
			counts: running, wantRequeue: time.Minute},
		{name: "a deadline too long for a Duration never passes", job: testJob(deadlineSeconds(math.MaxInt64)), started: 1000 * time.Hour,
			counts: running},
		{name: "every node done with a failure under Continue completes without stopping anything", job: testJob(continuePolicy),
			counts: musterv1.BroadcastCounts{Desired: 2, Succeeded: 1, Failed: 1}, firstFailed: failed, wantReason: musterv1.BroadcastJobReasonCompleted},
		{name: "every node done with a failure under Pause (resumed) fails", job: testJob(pausePolicy),
			counts: musterv1.BroadcastCounts{Desired: 2, Succeeded: 1, Failed: 1}, firstFailed: failed, wantReason: musterv1.BroadcastJobReasonPodsFailed},
		{name: "a node still waiting for its pod holds up completion", job: testJob(), counts: allDone, missing: 1},
		{name: "no eligible node: the job waits for one rather than completing", job: testJob(), counts: musterv1.BroadcastCounts{}},
		{name: "completionPolicy Never goes on after every node is done", job: testJob(never), counts: allDone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status := musterv1.BroadcastJobStatus{StartTime: &metav1.Time{Time: t0.Add(-tc.started)}, BroadcastCounts: tc.counts}
			end, requeue := decideEnd(observed{job: tc.job, now: t0}, status, tc.firstFailed, tc.missing)
			gotReason, gotStop := "", false
			if end != nil {
				gotReason, gotStop = end.reason, end.stopActive
			}
			if gotReason != tc.wantReason || gotStop != tc.wantStop {
				t.Errorf("end = %q (stop pods %v), want %q (stop pods %v)", gotReason, gotStop, tc.wantReason, tc.wantStop)
			}
			if requeue != tc.wantRequeue {
				t.Errorf("requeueAfter = %s, want %s", requeue, tc.wantRequeue)
			}
		})
	}
}

func TestCreatable(t *testing.T) {
	missing := []string{"n1", "n2", "n3"}
	cases := []struct {
		name        string
		parallelism *int32
		active      int32
		want        []string
	}{
		{name: "without parallelism every missing node gets a pod", want: missing},
		{name: "parallelism leaves room beside the running pods", parallelism: new(int32(3)), active: 1, want: []string{"n1", "n2"}},
		{name: "parallelism lowered below the running pods creates nothing", parallelism: new(int32(1)), active: 2, want: []string{}},
		{name: "room beyond the missing nodes creates each once", parallelism: new(int32(10)), want: missing},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := creatable(missing, tc.parallelism, tc.active); !slices.Equal(got, tc.want) {
				t.Errorf("creatable = %v, want %v", got, tc.want)
			}
		})
	}
}
