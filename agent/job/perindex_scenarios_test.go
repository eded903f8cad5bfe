package job_test

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestBackoffLimitPerIndexRetriesAfterTheIndexBackoff(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), indexedMode, func(j *batchv1.Job) {
		j.Spec.BackoffLimitPerIndex = ptr.To[int32](2)
		j.Spec.BackoffLimit = nil
	})
	pods := f.waitRunning(1)
	f.finish(pods[0], corev1.PodFailed, 1)
	f.observed(j)
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
	f.observed(j)
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

func TestBackoffLimitPerIndexLetsOtherIndexesFinish(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](3), ptr.To[int32](3), indexedMode, func(j *batchv1.Job) {
		j.Spec.BackoffLimitPerIndex = ptr.To[int32](0)
		j.Spec.BackoffLimit = nil
	})
	pods := f.waitRunning(3)
	byIndex := map[string]corev1.Pod{}
	for _, p := range pods {
		byIndex[p.Annotations[batchv1.JobCompletionIndexAnnotation]] = p
	}
	f.finish(byIndex["0"], corev1.PodFailed, 1)
	f.waitStatus(j, counts{Active: 2, Failed: 1, FailedIndexes: "0"})
	clock.Step(time.Minute)
	f.observed(j)
	if n := len(f.running()); n != 2 {
		t.Fatalf("a failed index was retried: %d running", n)
	}
	f.finish(byIndex["1"], corev1.PodSucceeded, 0)
	f.finish(byIndex["2"], corev1.PodSucceeded, 0)
	f.waitCondition(j, batchv1.JobFailed, batchv1.JobReasonFailedIndexes)
	f.waitStatus(j, counts{Succeeded: 2, Failed: 1, Completed: "1,2", FailedIndexes: "0"})
}

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

func TestIgnoredFailureOfAnIndexStillWaitsForTheBackoff(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), indexedMode, ignoreExitCode42, func(j *batchv1.Job) {
		j.Spec.BackoffLimitPerIndex = ptr.To[int32](0)
		j.Spec.BackoffLimit = nil
	})
	pods := f.waitRunning(1)
	f.finish(pods[0], corev1.PodFailed, 42)
	f.observed(j)
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
