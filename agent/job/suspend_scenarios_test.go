package job_test

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestSuspendWhileBackingOffCreatesNothingOnResumeUntilBackoffEnds(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](2))
	pods := f.waitRunning(1)
	f.finish(pods[0], corev1.PodFailed, 1)
	f.waitStatus(j, counts{Failed: 1})
	f.patchJob(j, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) })
	f.waitCondition(j, batchv1.JobSuspended, "")
	f.patchJob(j, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(false) })
	time.Sleep(300 * time.Millisecond)
	if n := len(f.running()); n != 0 {
		t.Fatal("resuming skipped the failure backoff")
	}
	clock.Step(11 * time.Second)
	f.touch(j)
	f.waitRunning(1)
}

func TestReadyPodsOfASuspendedJobAreRemoved(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](2))
	pods := f.waitRunning(2)
	f.setReady(pods[0])
	f.waitStatus(j, counts{Active: 2, Ready: 1})
	f.patchJob(j, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) })
	f.waitStatus(j, counts{})
}

func TestSuspendedJobDoesNotRunOutItsDeadline(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), func(j *batchv1.Job) {
		j.Spec.Suspend = ptr.To(true)
		j.Spec.ActiveDeadlineSeconds = ptr.To[int64](30)
	})
	f.waitCondition(j, batchv1.JobSuspended, "")
	clock.Step(time.Minute)
	f.touch(j)
	time.Sleep(300 * time.Millisecond)
	if got := f.get(j); jobFinishedOrEnding(got) {
		t.Fatalf("a suspended job hit its deadline: %s", conditions(got))
	}
	// The deadline counts from the resume.
	f.patchJob(j, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(false) })
	f.waitRunning(1)
	clock.Step(20 * time.Second)
	f.touch(j)
	time.Sleep(300 * time.Millisecond)
	if got := f.get(j); jobFinishedOrEnding(got) {
		t.Fatalf("failed 20s after the resume with a 30s deadline: %s", conditions(got))
	}
	clock.Step(11 * time.Second)
	f.touch(j)
	f.waitCondition(j, batchv1.JobFailed, batchv1.JobReasonDeadlineExceeded)
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
