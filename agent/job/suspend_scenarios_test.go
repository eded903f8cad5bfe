package job_test

import (
	"fmt"
	"maps"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	f.observed(j)
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
	f.observed(j)
	if got := f.get(j); jobFinishedOrEnding(got) {
		t.Fatalf("a suspended job hit its deadline: %s", conditions(got))
	}
	// The deadline counts from the resume.
	f.patchJob(j, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(false) })
	f.waitRunning(1)
	clock.Step(20 * time.Second)
	f.observed(j)
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
	f.observed(j)
	if got := f.get(j); hasCondition(got, batchv1.JobSuspended) {
		t.Errorf("a Job being deleted got a Suspended condition: %s", conditions(got))
	}
}

// A Job suspended before it ran, whose pods all succeeded (here: pods the test makes
// join it once finished, as pods finished before a restart of the agent would be found),
// finishes: the API server refuses a finished Job without startTime, so the agent gives it
// one, instead of its write being refused over and over.
func TestSuspendedJobWhosePodsAllSucceededCompletes(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](4), func(j *batchv1.Job) {
		j.Spec.Suspend = ptr.To(true)
		j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	})
	f.waitCondition(j, batchv1.JobSuspended, "JobSuspended")
	job := f.get(j)
	if job.Status.StartTime != nil {
		t.Fatalf("suspended job has startTime %v", job.Status.StartTime)
	}
	owner := metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))
	for i := range 4 {
		// Created outside the job's selector and joined to it only once Succeeded: a
		// suspended job deletes the pods it sees running.
		p := f.loosePod(fmt.Sprintf("done-%d", i), "outside", owner, func(p *corev1.Pod) {
			p.Finalizers = []string{batchv1.JobTrackingFinalizer}
			p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		})
		f.finish(p, corev1.PodSucceeded, 0)
		f.patchPod(p, func(p *corev1.Pod) { maps.Copy(p.Labels, job.Spec.Template.Labels) })
	}
	got := f.waitCondition(j, batchv1.JobComplete, "")
	if got.Status.Succeeded != 4 || got.Status.StartTime == nil || got.Status.CompletionTime == nil {
		t.Errorf("succeeded %d, startTime %v, completionTime %v: want 4 and both times", got.Status.Succeeded, got.Status.StartTime, got.Status.CompletionTime)
	}
}
