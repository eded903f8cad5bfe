package job_test

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestParallelismOneRunsCompletionsOneAtATime(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](3))
	for i := range 3 {
		pods := f.waitRunning(1)
		f.finish(pods[0], corev1.PodSucceeded, 0)
		f.waitStatus(j, counts{Active: int32(min(1, 2-i)), Succeeded: int32(i + 1)})
	}
	f.waitCondition(j, batchv1.JobComplete, "")
}

func TestZeroParallelismStartsNothing(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](0), ptr.To[int32](3))
	f.observed(j)
	got := f.get(j)
	if len(f.pods(true)) != 0 || jobFinishedOrEnding(got) || got.Status.StartTime == nil {
		t.Errorf("parallelism 0: %d pods, conditions %s, startTime %v", len(f.pods(true)), conditions(got), got.Status.StartTime)
	}
}

func TestScaleUpNeverStartsMoreThanTheRemainingCompletions(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](3))
	pods := f.waitRunning(1)
	f.finish(pods[0], corev1.PodSucceeded, 0)
	f.waitRunning(1)
	f.patchJob(j, func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](10) })
	f.waitRunning(2)
	f.waitStatus(j, counts{Active: 2, Succeeded: 1})
}

func TestCompletionsUnsetIgnoresFailuresAfterASuccess(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), nil, backoff(6))
	pods := f.waitRunning(2)
	f.finish(pods[0], corev1.PodSucceeded, 0)
	f.finish(pods[1], corev1.PodFailed, 1)
	done := f.waitCondition(j, batchv1.JobComplete, "")
	if got := countsOf(&done.Status); got != (counts{Succeeded: 1, Failed: 1}) {
		t.Errorf("counts %+v", got)
	}
}

func TestZeroCompletionsCompletesAtOnce(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](0))
	done := f.waitCondition(j, batchv1.JobComplete, batchv1.JobReasonCompletionsReached)
	if len(f.pods(true)) != 0 || done.Status.Succeeded != 0 {
		t.Errorf("completions 0: %d pods, succeeded %d", len(f.pods(true)), done.Status.Succeeded)
	}
}
