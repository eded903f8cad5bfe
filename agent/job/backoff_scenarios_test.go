package job_test

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestBackoffLimitAllowsExactlyThatManyFailures(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), backoff(2))
	for i := range 2 {
		pods := f.waitRunning(1)
		f.finish(pods[0], corev1.PodFailed, 1)
		f.waitStatus(j, counts{Failed: int32(i + 1)})
		if hasCondition(f.get(j), batchv1.JobFailureTarget) {
			t.Fatalf("failed after %d failures with backoffLimit 2", i+1)
		}
		clock.Step(time.Duration(10<<i)*time.Second + time.Second)
		f.touch(j)
	}
	pods := f.waitRunning(1)
	f.finish(pods[0], corev1.PodFailed, 1)
	f.waitCondition(j, batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded)
	f.waitStatus(j, counts{Failed: 3})
}

func TestSuccessResetsTheBackoff(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](3))
	first := f.waitRunning(1)
	f.finish(first[0], corev1.PodFailed, 1)
	f.waitStatus(j, counts{Failed: 1})
	clock.Step(11 * time.Second)
	f.touch(j)
	second := f.waitRunning(1)
	f.finish(second[0], corev1.PodSucceeded, 0)
	third := f.waitRunning(1)
	f.finish(third[0], corev1.PodFailed, 1)
	f.waitStatus(j, counts{Succeeded: 1, Failed: 2})
	// One failure since the last success: 10s, not 20s.
	clock.Step(11 * time.Second)
	f.touch(j)
	f.waitRunning(1)
}

func TestOnFailureWithBackoffLimitZeroFailsAtTheFirstRestart(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), backoff(0), func(j *batchv1.Job) {
		j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	})
	pods := f.waitRunning(1)
	p := pods[0]
	p.Status.Phase = corev1.PodRunning
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: "busybox", ImageID: "busybox", RestartCount: 1}}
	if err := env.Client.Status().Update(t.Context(), &p); err != nil {
		t.Fatal(err)
	}
	f.waitCondition(j, batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded)
}

func TestDeadlineWinsOverBackoffWait(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), func(j *batchv1.Job) { j.Spec.ActiveDeadlineSeconds = ptr.To[int64](5) })
	pods := f.waitRunning(1)
	f.finish(pods[0], corev1.PodFailed, 1)
	f.waitStatus(j, counts{Failed: 1})
	clock.Step(6 * time.Second)
	f.touch(j)
	f.waitCondition(j, batchv1.JobFailed, batchv1.JobReasonDeadlineExceeded)
}

func ignoreExitCode42(j *batchv1.Job) {
	j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		exitCodeRule(batchv1.PodFailurePolicyActionIgnore, batchv1.PodFailurePolicyOnExitCodesOpIn, 42),
	}}
}

func TestIgnoredFailureStillWaitsForTheBackoff(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), ignoreExitCode42)
	pods := f.waitRunning(1)
	f.finish(pods[0], corev1.PodFailed, 42)
	f.eventually("the ignored pod released", func() (bool, string) {
		for _, p := range f.pods(true) {
			if p.Name == pods[0].Name {
				return len(p.Finalizers) == 0, p.Name
			}
		}
		return true, ""
	})
	f.observed(j)
	if n := len(f.running()); n != 0 {
		t.Fatalf("replaced before the 10s backoff: %d running", n)
	}
	clock.Step(11 * time.Second)
	f.touch(j)
	f.waitRunning(1)
	f.waitStatus(j, counts{Active: 1})
}
