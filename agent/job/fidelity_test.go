package job_test

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Behaviours of the built-in Job controller that users notice (issue 15).

func TestExplicitBackoffLimitHoldsWithBackoffLimitPerIndex(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](3), ptr.To[int32](3), indexedMode, backoff(1), func(j *batchv1.Job) {
		j.Spec.BackoffLimitPerIndex = ptr.To[int32](5)
	})
	pods := f.waitRunning(3)
	f.finish(pods[0], corev1.PodFailed, 1)
	f.finish(pods[1], corev1.PodFailed, 1)
	// Two failures in all exceed backoffLimit 1, though each index may fail five times.
	f.waitCondition(j, batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded)
	f.eventually("the last pod stopped", func() (bool, string) { return len(f.running()) == 0, "" })
}

func TestBackoffLimitPerIndexFirstPodsCarryFailureCountZero(t *testing.T) {
	f := newFixture(t)
	f.job(ptr.To[int32](2), ptr.To[int32](2), indexedMode, func(j *batchv1.Job) {
		j.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
		j.Spec.BackoffLimit = nil
	})
	for _, p := range f.waitRunning(2) {
		if got, ok := p.Annotations[batchv1.JobIndexFailureCountAnnotation]; !ok || got != "0" {
			t.Errorf("pod %s: %s = %q (set %v), want \"0\"", p.Name, batchv1.JobIndexFailureCountAnnotation, got, ok)
		}
		if _, ok := p.Annotations[batchv1.JobIndexIgnoredFailureCountAnnotation]; ok {
			t.Errorf("pod %s carries an ignored failure count on its first try", p.Name)
		}
	}
}

func TestSuspendClearsStartTimeAndResumeSetsIt(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](2))
	f.waitRunning(1)
	if f.get(j).Status.StartTime == nil {
		t.Fatal("running job without startTime")
	}
	f.patchJob(j, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) })
	suspended := f.waitCondition(j, batchv1.JobSuspended, "JobSuspended")
	if suspended.Status.StartTime != nil {
		t.Errorf("suspended job keeps startTime %v", suspended.Status.StartTime)
	}
	f.patchJob(j, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(false) })
	f.waitRunning(1)
	f.eventually("startTime set on resume", func() (bool, string) {
		got := f.get(j)
		return got.Status.StartTime != nil, conditions(got)
	})
}

func TestJobBeingDeletedIsNotReportedSuspended(t *testing.T) {
	f := newFixture(t)
	const hold = "test.muster.dev/hold"
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), func(j *batchv1.Job) { j.Finalizers = []string{hold} })
	t.Cleanup(func() {
		cur, err := f.tryGet(j)
		if err != nil {
			return
		}
		patch := client.MergeFrom(cur.DeepCopy())
		cur.Finalizers = nil
		_ = env.Client.Patch(t.Context(), cur, patch)
	})
	f.waitRunning(1)
	if err := env.Client.Delete(t.Context(), f.get(j), client.PropagationPolicy("Background")); err != nil {
		t.Fatal(err)
	}
	f.patchJob(j, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) })
	time.Sleep(time.Second)
	if got := f.get(j); hasCondition(got, batchv1.JobSuspended) {
		t.Errorf("a Job being deleted got a Suspended condition: %s", conditions(got))
	}
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
	time.Sleep(300 * time.Millisecond)
	if n := len(f.running()); n != 0 {
		t.Fatalf("replaced before the 10s backoff: %d running", n)
	}
	clock.Step(11 * time.Second)
	f.touch(j)
	f.waitRunning(1)
	f.waitStatus(j, counts{Active: 1})
}

func TestIgnoredFailureOfAnIndexStillWaitsForTheBackoff(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), indexedMode, ignoreExitCode42, func(j *batchv1.Job) {
		j.Spec.BackoffLimitPerIndex = ptr.To[int32](0)
		j.Spec.BackoffLimit = nil
	})
	pods := f.waitRunning(1)
	f.finish(pods[0], corev1.PodFailed, 42)
	time.Sleep(500 * time.Millisecond)
	if n := len(f.running()); n != 0 {
		t.Fatalf("index retried before its backoff: %d running", n)
	}
	clock.Step(11 * time.Second)
	f.touch(j)
	retry := f.waitRunning(1)
	if a := retry[0].Annotations; a[batchv1.JobIndexFailureCountAnnotation] != "0" || a[batchv1.JobIndexIgnoredFailureCountAnnotation] != "1" {
		t.Errorf("retry annotations %v, want failure count 0 and ignored 1", a)
	}
	f.waitStatus(j, counts{Active: 1, FailedIndexes: ""})
}
