package job_test

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

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

func TestPodFailurePolicyOnPodConditionFailsTheJob(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), func(j *batchv1.Job) {
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action:          batchv1.PodFailurePolicyActionFailJob,
			OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
		}}}
	})
	pods := f.waitRunning(1)
	f.finish(pods[0], corev1.PodFailed, 137, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "DeletionByTaintManager"})
	f.waitCondition(j, batchv1.JobFailed, batchv1.JobReasonPodFailurePolicy)
}

func TestPodFailurePolicyCountActionCounts(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), backoff(0), func(j *batchv1.Job) {
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
			exitCodeRule(batchv1.PodFailurePolicyActionCount, batchv1.PodFailurePolicyOnExitCodesOpIn, 5),
		}}
	})
	pods := f.waitRunning(1)
	f.finish(pods[0], corev1.PodFailed, 5)
	f.waitCondition(j, batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded)
}

func TestPodFailurePolicyFirstMatchingRuleWins(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), backoff(0), func(j *batchv1.Job) {
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
			exitCodeRule(batchv1.PodFailurePolicyActionIgnore, batchv1.PodFailurePolicyOnExitCodesOpIn, 3),
			exitCodeRule(batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyOnExitCodesOpIn, 3),
		}}
	})
	pods := f.waitRunning(1)
	f.finish(pods[0], corev1.PodFailed, 3)
	// Ignored, the failure still holds the replacement back by the backoff.
	f.waitStatus(j, counts{})
	clock.Step(11 * time.Second)
	f.touch(j)
	f.waitRunning(1)
	if got := f.get(j); jobFinishedOrEnding(got) || got.Status.Failed != 0 {
		t.Fatalf("the Ignore rule listed first did not win: %+v %s", countsOf(&got.Status), conditions(got))
	}
}
