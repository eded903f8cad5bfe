package job_test

import (
	"testing"
	"time"

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

func TestNonIndexedPodsHaveNoIndex(t *testing.T) {
	f := newFixture(t)
	f.job(ptr.To[int32](1), ptr.To[int32](1))
	pods := f.waitRunning(1)
	if _, ok := pods[0].Annotations[batchv1.JobCompletionIndexAnnotation]; ok || len(pods[0].Spec.Containers[0].Env) != 0 || pods[0].Spec.Hostname != "" {
		t.Errorf("NonIndexed pod carries index details: %v %v %q", pods[0].Annotations, pods[0].Spec.Containers[0].Env, pods[0].Spec.Hostname)
	}
}

func TestIndexedCompletesOnlyWhenEveryIndexSucceeded(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](2), indexedMode)
	pods := f.waitRunning(2)
	f.finish(pods[0], corev1.PodSucceeded, 0)
	time.Sleep(300 * time.Millisecond)
	if hasCondition(f.get(j), batchv1.JobSuccessCriteriaMet) {
		t.Fatal("one of two indexes met the success criteria")
	}
	f.finish(pods[1], corev1.PodSucceeded, 0)
	f.waitCondition(j, batchv1.JobComplete, batchv1.JobReasonCompletionsReached)
}

func TestBackoffLimitPerIndexRetriesAfterTheIndexBackoff(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), indexedMode, func(j *batchv1.Job) {
		j.Spec.BackoffLimitPerIndex = ptr.To[int32](2)
		j.Spec.BackoffLimit = nil
	})
	pods := f.waitRunning(1)
	f.finish(pods[0], corev1.PodFailed, 1)
	time.Sleep(500 * time.Millisecond)
	if n := len(f.running()); n != 0 {
		t.Fatal("index retried before its backoff")
	}
	clock.Step(11 * time.Second)
	f.touch(j)
	f.waitRunning(1)
}

func TestBackoffLimitPerIndexKeepsTheFailedPodUntilItsReplacementExists(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), indexedMode, func(j *batchv1.Job) {
		j.Spec.BackoffLimitPerIndex = ptr.To[int32](2)
		j.Spec.BackoffLimit = nil
	})
	pods := f.waitRunning(1)
	f.finish(pods[0], corev1.PodFailed, 1)
	time.Sleep(500 * time.Millisecond)
	held := false
	for _, p := range f.pods(true) {
		if p.UID == pods[0].UID && len(p.Finalizers) > 0 {
			held = true
		}
	}
	if !held {
		t.Fatal("the failed pod lost its finalizer before its index had a new pod: its failure count could be lost")
	}
	clock.Step(11 * time.Second)
	f.touch(j)
	f.waitRunning(1)
	f.eventually("the failed pod released once replaced", func() (bool, string) {
		for _, p := range f.pods(true) {
			if p.UID == pods[0].UID && len(p.Finalizers) > 0 {
				return false, "held"
			}
		}
		return true, ""
	})
	f.waitStatus(j, counts{Active: 1, Failed: 1, FailedIndexes: ""})
}

func TestSuccessPolicyIndexesAndCountTogether(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](4), ptr.To[int32](4), indexedMode, func(j *batchv1.Job) {
		j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("0-2"), SucceededCount: ptr.To[int32](2)}}}
	})
	pods := f.waitRunning(4)
	for _, p := range pods {
		if i := p.Annotations[batchv1.JobCompletionIndexAnnotation]; i == "3" || i == "0" {
			f.finish(p, corev1.PodSucceeded, 0)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if hasCondition(f.get(j), batchv1.JobSuccessCriteriaMet) {
		t.Fatal("index 3 is outside the rule's indexes but counted")
	}
	for _, p := range pods {
		if p.Annotations[batchv1.JobCompletionIndexAnnotation] == "1" {
			f.finish(p, corev1.PodSucceeded, 0)
		}
	}
	f.waitCondition(j, batchv1.JobComplete, batchv1.JobReasonSuccessPolicy)
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

func TestPodFailurePolicyContainerNameNarrowsTheRule(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), backoff(3), func(j *batchv1.Job) {
		j.Spec.Template.Spec.Containers = append(j.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "busybox"})
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action:      batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{ContainerName: ptr.To("sidecar"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
		}}}
	})
	pods := f.waitRunning(1)
	// "main" exits 42, but the rule is about "sidecar": the failure only counts.
	f.finish(pods[0], corev1.PodFailed, 42)
	got := f.waitStatus(j, counts{Failed: 1})
	if hasCondition(got, batchv1.JobFailureTarget) {
		t.Fatal("a rule for container sidecar matched container main")
	}
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
