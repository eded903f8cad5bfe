package job_test

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestCounterNeverDecreasesWhenPodsGoAfterTheEnd(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](2))
	pods := f.waitRunning(2)
	for _, p := range pods {
		f.finish(p, corev1.PodSucceeded, 0)
	}
	f.waitCondition(j, batchv1.JobComplete, "")
	for _, p := range f.pods(true) {
		if err := env.Client.Delete(t.Context(), &p); err != nil {
			t.Fatal(err)
		}
	}
	f.observed(j)
	if got := countsOf(&f.get(j).Status); got != (counts{Succeeded: 2}) {
		t.Errorf("after the pods went: %+v", got)
	}
	if n := len(f.pods(true)); n != 0 {
		t.Errorf("a complete job made %d new pods", n)
	}
}

func TestCompletionTimeIsAfterStartTime(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1))
	pods := f.waitRunning(1)
	clock.Step(3 * time.Second)
	f.finish(pods[0], corev1.PodSucceeded, 0)
	done := f.waitCondition(j, batchv1.JobComplete, "")
	if done.Status.CompletionTime.Before(done.Status.StartTime) {
		t.Errorf("completionTime %v before startTime %v", done.Status.CompletionTime, done.Status.StartTime)
	}
}

func TestFailureTargetComesBeforeFailed(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), backoff(0))
	pods := f.waitRunning(1)
	f.finish(pods[0], corev1.PodFailed, 1)
	failed := f.waitCondition(j, batchv1.JobFailed, "")
	var order []batchv1.JobConditionType
	for _, c := range failed.Status.Conditions {
		order = append(order, c.Type)
	}
	if len(order) < 2 || order[0] != batchv1.JobFailureTarget || order[len(order)-1] != batchv1.JobFailed {
		t.Errorf("conditions %v: want FailureTarget first and Failed last", order)
	}
}

func TestReadyNeverExceedsActive(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](2))
	pods := f.waitRunning(2)
	f.setReady(pods[0])
	f.setReady(pods[1])
	f.waitStatus(j, counts{Active: 2, Ready: 2})
	f.finish(pods[0], corev1.PodSucceeded, 0)
	f.waitStatus(j, counts{Active: 1, Ready: 1, Succeeded: 1})
}

func TestEventsForCreateDeleteAndFailure(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](2), backoff(0))
	pods := f.waitRunning(2)
	f.finish(pods[0], corev1.PodFailed, 1)
	f.waitCondition(j, batchv1.JobFailed, "")
	for _, reason := range []string{"SuccessfulCreate", "SuccessfulDelete", batchv1.JobReasonBackoffLimitExceeded} {
		f.expectEvent(j, reason)
	}
}
