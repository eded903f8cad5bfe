package job_test

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

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
	f.observed(j)
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

func TestSuccessPolicyWithSucceededCount(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](4), ptr.To[int32](4), indexedMode, func(j *batchv1.Job) {
		j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](2)}}}
	})
	pods := f.waitRunning(4)
	f.finish(pods[0], corev1.PodSucceeded, 0)
	f.observed(j)
	if got := f.get(j); jobFinishedOrEnding(got) {
		t.Fatalf("one success met a rule asking for two: %s", conditions(got))
	}
	f.finish(pods[1], corev1.PodSucceeded, 0)
	f.waitCondition(j, batchv1.JobComplete, batchv1.JobReasonSuccessPolicy)
	f.eventually("the remaining pods stopped", func() (bool, string) { return len(f.running()) == 0, "" })
	if got := f.get(j); got.Status.Failed != 0 {
		t.Errorf("pods stopped after success counted as failed: %+v", countsOf(&got.Status))
	}
}
