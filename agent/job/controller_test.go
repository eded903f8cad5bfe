package job_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var (
	indexedMode = func(j *batchv1.Job) { j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion) }
	backoff     = func(n int32) func(*batchv1.Job) { return func(j *batchv1.Job) { j.Spec.BackoffLimit = ptr.To(n) } }
)

func TestNonIndexedRunsParallelismUntilCompletions(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](3))
	pods := f.waitRunning(2)
	for _, p := range pods {
		if !slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer) || p.Labels[batchv1.ControllerUidLabel] != string(f.get(j).UID) {
			t.Fatalf("pod %s lacks the tracking finalizer or the controller-uid label: %v %v", p.Name, p.Finalizers, p.Labels)
		}
	}
	f.waitStatus(j, counts{Active: 2})
	f.finish(pods[0], corev1.PodSucceeded, 0)
	f.finish(pods[1], corev1.PodSucceeded, 0)
	// One completion left: one more pod, not two.
	last := f.waitRunning(1)
	f.waitStatus(j, counts{Active: 1, Succeeded: 2})
	f.finish(last[0], corev1.PodSucceeded, 0)
	done := f.waitCondition(j, batchv1.JobComplete, batchv1.JobReasonCompletionsReached)
	if !hasCondition(done, batchv1.JobSuccessCriteriaMet) || done.Status.CompletionTime == nil || done.Status.StartTime == nil {
		t.Errorf("complete job: conditions %s, completionTime %v, startTime %v", conditions(done), done.Status.CompletionTime, done.Status.StartTime)
	}
	if got := countsOf(&done.Status); got != (counts{Succeeded: 3}) {
		t.Errorf("final counts %+v", got)
	}
	f.eventually("finalizers released", func() (bool, string) {
		for _, p := range f.pods(true) {
			if slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer) {
				return false, p.Name
			}
		}
		return true, ""
	})
	f.expectEvent(j, "Completed")
}

func TestCompletionsUnsetEndsAfterFirstSuccessAndTheRestFinish(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](3), nil)
	pods := f.waitRunning(3)
	f.finish(pods[0], corev1.PodSucceeded, 0)
	f.waitStatus(j, counts{Active: 2, Succeeded: 1})
	f.observed(j)
	if n := len(f.running()); n != 2 {
		t.Fatalf("%d running after the first success; no new pod may start", n)
	}
	f.finish(pods[1], corev1.PodSucceeded, 0)
	f.finish(pods[2], corev1.PodSucceeded, 0)
	f.waitCondition(j, batchv1.JobComplete, "")
	f.waitStatus(j, counts{Succeeded: 3})
}

func TestParallelismAboveRemainingCompletions(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](5), ptr.To[int32](2))
	f.waitRunning(2)
	f.waitStatus(j, counts{Active: 2})
}

func TestManyPodsAtOnceAreNeverOverCreated(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](40), ptr.To[int32](100))
	f.waitRunning(40)
	f.waitStatus(j, counts{Active: 40})
	f.observed(j)
	if n := len(f.pods(true)); n != 40 {
		t.Fatalf("%d pods for parallelism 40", n)
	}
}

func TestReadyCountsReadyPods(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](2))
	pods := f.waitRunning(2)
	f.setReady(pods[0])
	f.waitStatus(j, counts{Active: 2, Ready: 1})
}

func TestFailedPodIsReplacedAfterBackoffThatDoubles(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1))
	first := f.waitRunning(1)
	f.finish(first[0], corev1.PodFailed, 1)
	f.waitStatus(j, counts{Failed: 1})
	f.observed(j)
	if n := len(f.running()); n != 0 {
		t.Fatalf("replaced before the 10s backoff: %d running", n)
	}
	clock.Step(11 * time.Second)
	f.touch(j)
	second := f.waitRunning(1)
	f.finish(second[0], corev1.PodFailed, 1)
	f.waitStatus(j, counts{Failed: 2})
	clock.Step(11 * time.Second)
	f.observed(j)
	if n := len(f.running()); n != 0 {
		t.Fatalf("second failure: replaced after 11s, the backoff is 20s")
	}
	clock.Step(10 * time.Second)
	f.touch(j)
	third := f.waitRunning(1)
	f.finish(third[0], corev1.PodSucceeded, 0)
	f.waitCondition(j, batchv1.JobComplete, "")
	f.waitStatus(j, counts{Succeeded: 1, Failed: 2})
}

func TestBackoffLimitFailsTheJobAndStopsItsPods(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](4), backoff(0))
	pods := f.waitRunning(2)
	f.finish(pods[0], corev1.PodFailed, 1)
	failed := f.waitCondition(j, batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded)
	if !hasCondition(failed, batchv1.JobFailureTarget) || hasCondition(failed, batchv1.JobComplete) || failed.Status.CompletionTime != nil {
		t.Errorf("failed job conditions %s, completionTime %v", conditions(failed), failed.Status.CompletionTime)
	}
	// The running pod was stopped and counts as failed.
	f.waitStatus(j, counts{Failed: 2})
	f.eventually("no pod left running", func() (bool, string) {
		return len(f.running()) == 0, ""
	})
}

func TestOnFailureRestartsCountAgainstBackoffLimit(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), backoff(2), func(j *batchv1.Job) {
		j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	})
	pods := f.waitRunning(1)
	cur := pods[0]
	cur.Status.Phase = corev1.PodRunning
	cur.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: "busybox", ImageID: "busybox", RestartCount: 2}}
	if err := env.Client.Status().Update(t.Context(), &cur); err != nil {
		t.Fatal(err)
	}
	f.waitCondition(j, batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded)
}

func TestIndexedPodsCarryTheirIndex(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](3), ptr.To[int32](3), indexedMode)
	pods := f.waitRunning(3)
	var got []string
	for _, p := range pods {
		idx := p.Annotations[batchv1.JobCompletionIndexAnnotation]
		got = append(got, idx)
		if p.Labels[batchv1.JobCompletionIndexAnnotation] != idx || p.Spec.Hostname != "job-"+idx || !strings.HasPrefix(p.Name, "job-"+idx+"-") {
			t.Errorf("pod %s: label %q hostname %q for index %s", p.Name, p.Labels[batchv1.JobCompletionIndexAnnotation], p.Spec.Hostname, idx)
		}
		env := p.Spec.Containers[0].Env
		if len(env) != 1 || env[0].Name != "JOB_COMPLETION_INDEX" || !strings.Contains(env[0].ValueFrom.FieldRef.FieldPath, batchv1.JobCompletionIndexAnnotation) {
			t.Errorf("pod %s env %+v", p.Name, env)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"0", "1", "2"}) {
		t.Fatalf("indexes %v", got)
	}
	for _, p := range pods {
		f.finish(p, corev1.PodSucceeded, 0)
	}
	f.waitCondition(j, batchv1.JobComplete, "")
	f.waitStatus(j, counts{Succeeded: 3, Completed: "0-2"})
}

func TestIndexedStartsLowestIndexesAndRetriesAFailedIndex(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](4), indexedMode)
	pods := f.waitRunning(2)
	byIndex := map[string]corev1.Pod{}
	for _, p := range pods {
		byIndex[p.Annotations[batchv1.JobCompletionIndexAnnotation]] = p
	}
	if len(byIndex) != 2 || byIndex["0"].Name == "" || byIndex["1"].Name == "" {
		t.Fatalf("first pods are not indexes 0 and 1: %v", byIndex)
	}
	// The failure is written first: a success seen alone for 100 ms is replaced before
	// its round, so on a loaded machine the other order could start index 2 before the
	// failure is seen, which is not what this test is about.
	f.finish(byIndex["1"], corev1.PodFailed, 1)
	f.finish(byIndex["0"], corev1.PodSucceeded, 0)
	// As upstream, a failure holds back every new pod of the job for the backoff.
	f.waitStatus(j, counts{Succeeded: 1, Failed: 1, Completed: "0"})
	// Then the lowest free indexes start: 1 again, and 2 (not 3).
	clock.Step(11 * time.Second)
	f.touch(j)
	now := f.waitRunning(2)
	var idx []string
	for _, p := range now {
		idx = append(idx, p.Annotations[batchv1.JobCompletionIndexAnnotation])
	}
	slices.Sort(idx)
	if !slices.Equal(idx, []string{"1", "2"}) {
		t.Fatalf("running indexes %v, want 1 (retried) and 2", idx)
	}
}

func TestBackoffLimitPerIndexFailsOnlyThatIndex(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](2), indexedMode, func(j *batchv1.Job) {
		j.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
		j.Spec.BackoffLimit = nil
	})
	pods := f.waitRunning(2)
	byIndex := map[string]corev1.Pod{}
	for _, p := range pods {
		byIndex[p.Annotations[batchv1.JobCompletionIndexAnnotation]] = p
	}
	f.finish(byIndex["1"], corev1.PodFailed, 1)
	clock.Step(11 * time.Second)
	f.touch(j)
	var retry corev1.Pod
	f.eventually("index 1 retried with its failure count", func() (bool, string) {
		for _, p := range f.running() {
			if p.Annotations[batchv1.JobCompletionIndexAnnotation] == "1" {
				retry = p
				return p.Annotations[batchv1.JobIndexFailureCountAnnotation] == "1", p.Annotations[batchv1.JobIndexFailureCountAnnotation]
			}
		}
		return false, "no pod for index 1"
	})
	f.finish(retry, corev1.PodFailed, 1)
	f.waitStatus(j, counts{Active: 1, Failed: 2, FailedIndexes: "1"})
	f.finish(byIndex["0"], corev1.PodSucceeded, 0)
	failed := f.waitCondition(j, batchv1.JobFailed, batchv1.JobReasonFailedIndexes)
	if got := countsOf(&failed.Status); got != (counts{Succeeded: 1, Failed: 2, Completed: "0", FailedIndexes: "1"}) {
		t.Errorf("final counts %+v", got)
	}
}

func TestMaxFailedIndexesFailsTheJobEarly(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](3), ptr.To[int32](3), indexedMode, func(j *batchv1.Job) {
		j.Spec.BackoffLimitPerIndex = ptr.To[int32](0)
		j.Spec.MaxFailedIndexes = ptr.To[int32](0)
		j.Spec.BackoffLimit = nil
	})
	pods := f.waitRunning(3)
	f.finish(pods[0], corev1.PodFailed, 1)
	f.waitCondition(j, batchv1.JobFailed, batchv1.JobReasonMaxFailedIndexesExceeded)
	f.eventually("the other indexes stopped", func() (bool, string) { return len(f.running()) == 0, "" })
}

func exitCodeRule(action batchv1.PodFailurePolicyAction, op batchv1.PodFailurePolicyOnExitCodesOperator, codes ...int32) batchv1.PodFailurePolicyRule {
	return batchv1.PodFailurePolicyRule{Action: action, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: op, Values: codes}}
}

func TestPodFailurePolicyFailJobOnExitCode(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](2), func(j *batchv1.Job) {
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
			exitCodeRule(batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyOnExitCodesOpIn, 42),
		}}
	})
	pods := f.waitRunning(2)
	f.finish(pods[0], corev1.PodFailed, 42)
	failed := f.waitCondition(j, batchv1.JobFailed, batchv1.JobReasonPodFailurePolicy)
	for _, c := range failed.Status.Conditions {
		if c.Type == batchv1.JobFailed && !strings.Contains(c.Message, "exit code 42") {
			t.Errorf("Failed message %q does not name the exit code", c.Message)
		}
	}
	f.eventually("the other pod stopped", func() (bool, string) { return len(f.running()) == 0, "" })
}

func TestPodFailurePolicyOtherExitCodeCountsTowardsBackoff(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), backoff(3), func(j *batchv1.Job) {
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
			exitCodeRule(batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyOnExitCodesOpIn, 42),
		}}
	})
	pods := f.waitRunning(1)
	f.finish(pods[0], corev1.PodFailed, 1)
	got := f.waitStatus(j, counts{Failed: 1})
	if hasCondition(got, batchv1.JobFailureTarget) {
		t.Fatal("exit code 1 matched a rule for 42")
	}
}

func TestPodFailurePolicyIgnoreDoesNotCount(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), backoff(0), func(j *batchv1.Job) {
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action:          batchv1.PodFailurePolicyActionIgnore,
			OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
		}}}
	})
	pods := f.waitRunning(1)
	f.finish(pods[0], corev1.PodFailed, 137, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler"})
	// backoffLimit 0 would fail the job on a counted failure; an ignored one is replaced
	// after the backoff.
	f.waitStatus(j, counts{})
	clock.Step(11 * time.Second)
	f.touch(j)
	replacement := f.waitRunning(1)
	if replacement[0].Name == pods[0].Name {
		t.Fatal("no replacement")
	}
	got := f.waitStatus(j, counts{Active: 1})
	if hasCondition(got, batchv1.JobFailureTarget) {
		t.Fatal("an ignored failure failed the job")
	}
}

func TestPodFailurePolicyNotInMatchesOtherNonZeroCodes(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), func(j *batchv1.Job) {
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
			exitCodeRule(batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyOnExitCodesOpNotIn, 1, 2),
		}}
	})
	pods := f.waitRunning(1)
	f.finish(pods[0], corev1.PodFailed, 3)
	f.waitCondition(j, batchv1.JobFailed, batchv1.JobReasonPodFailurePolicy)
}

func TestPodFailurePolicyFailIndex(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](2), indexedMode, func(j *batchv1.Job) {
		j.Spec.BackoffLimitPerIndex = ptr.To[int32](3)
		j.Spec.BackoffLimit = nil
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
			exitCodeRule(batchv1.PodFailurePolicyActionFailIndex, batchv1.PodFailurePolicyOnExitCodesOpIn, 7),
		}}
	})
	pods := f.waitRunning(2)
	byIndex := map[string]corev1.Pod{}
	for _, p := range pods {
		byIndex[p.Annotations[batchv1.JobCompletionIndexAnnotation]] = p
	}
	f.finish(byIndex["0"], corev1.PodFailed, 7)
	f.waitStatus(j, counts{Active: 1, Failed: 1, FailedIndexes: "0"})
	f.finish(byIndex["1"], corev1.PodSucceeded, 0)
	f.waitCondition(j, batchv1.JobFailed, batchv1.JobReasonFailedIndexes)
}

func TestSuccessPolicyEndsTheJobEarly(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](3), ptr.To[int32](3), indexedMode, func(j *batchv1.Job) {
		j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("0")}}}
	})
	pods := f.waitRunning(3)
	for _, p := range pods {
		if p.Annotations[batchv1.JobCompletionIndexAnnotation] == "0" {
			f.finish(p, corev1.PodSucceeded, 0)
		}
	}
	done := f.waitCondition(j, batchv1.JobComplete, batchv1.JobReasonSuccessPolicy)
	if !hasCondition(done, batchv1.JobSuccessCriteriaMet) || done.Status.CompletedIndexes != "0" {
		t.Errorf("conditions %s completedIndexes %q", conditions(done), done.Status.CompletedIndexes)
	}
	f.eventually("the other indexes stopped", func() (bool, string) { return len(f.running()) == 0, "" })
}

func TestActiveDeadlineFailsTheJob(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](2), func(j *batchv1.Job) { j.Spec.ActiveDeadlineSeconds = ptr.To[int64](30) })
	f.waitRunning(2)
	clock.Step(31 * time.Second)
	f.touch(j)
	f.waitCondition(j, batchv1.JobFailed, batchv1.JobReasonDeadlineExceeded)
	f.eventually("pods stopped", func() (bool, string) { return len(f.running()) == 0, "" })
	f.waitStatus(j, counts{Failed: 2})
}

func TestSuspendStopsPodsWithoutCountingThemAndResumeRestarts(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](4))
	f.waitRunning(2)
	started := f.get(j).Status.StartTime
	f.patchJob(j, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) })
	f.waitCondition(j, batchv1.JobSuspended, "JobSuspended")
	f.eventually("pods stopped", func() (bool, string) { return len(f.running()) == 0, "" })
	f.waitStatus(j, counts{})
	clock.Step(5 * time.Second)
	f.patchJob(j, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(false) })
	f.waitRunning(2)
	resumed := f.waitStatus(j, counts{Active: 2})
	if !resumed.Status.StartTime.After(started.Time) {
		t.Errorf("startTime %v not reset on resume (was %v)", resumed.Status.StartTime, started)
	}
	f.expectEvent(j, "Resumed")
}

func TestCreatedSuspendedStartsNothing(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](2), func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) })
	got := f.waitCondition(j, batchv1.JobSuspended, "JobSuspended")
	if got.Status.StartTime != nil || len(f.pods(true)) != 0 {
		t.Errorf("suspended job: startTime %v, %d pods", got.Status.StartTime, len(f.pods(true)))
	}
}

func TestDeletedPodIsReplacedAtOnceAndCountedFailed(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1))
	pods := f.waitRunning(1)
	if err := env.Client.Delete(t.Context(), &pods[0]); err != nil {
		t.Fatal(err)
	}
	f.eventually("the deleted pod counted as failed and replaced", func() (bool, string) {
		got := f.get(j)
		running := f.running()
		replaced := len(running) == 1 && running[0].UID != pods[0].UID
		if !replaced {
			clock.Step(11 * time.Second) // past the backoff, wherever the record's clock is
			f.touch(j)
		}
		return got.Status.Failed == 1 && replaced, fmt.Sprintf("%+v, %d running", countsOf(&got.Status), len(running))
	})
}

func TestPodReplacementPolicyFailedWaitsForTheFinalPhase(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), func(j *batchv1.Job) {
		j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
	})
	pods := f.waitRunning(1)
	if err := env.Client.Delete(t.Context(), &pods[0]); err != nil {
		t.Fatal(err)
	}
	f.waitStatus(j, counts{Terminating: 1})
	f.observed(j)
	if n := len(f.running()); n != 0 {
		t.Fatalf("replaced while the old pod terminates")
	}
	f.finish(pods[0], corev1.PodFailed, 137)
	f.waitStatus(j, counts{Failed: 1})
	clock.Step(11 * time.Second)
	f.touch(j)
	f.waitRunning(1)
}

func TestScaleDownRemovesPodsWithoutCountingThem(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](3), ptr.To[int32](10))
	f.waitRunning(3)
	f.patchJob(j, func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](1) })
	f.waitRunning(1)
	f.waitStatus(j, counts{Active: 1})
	f.patchJob(j, func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](4) })
	f.waitRunning(4)
	f.waitStatus(j, counts{Active: 4})
}

func TestACompletionIsNotLostWhenThePodIsDeletedRightAway(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](2))
	pods := f.waitRunning(2)
	// Succeed and delete at once: the finalizer holds the pod until it is counted.
	f.finish(pods[0], corev1.PodSucceeded, 0)
	if err := env.Client.Delete(t.Context(), &pods[0]); err != nil {
		t.Fatal(err)
	}
	f.finish(pods[1], corev1.PodSucceeded, 0)
	if err := env.Client.Delete(t.Context(), &pods[1]); err != nil {
		t.Fatal(err)
	}
	f.waitCondition(j, batchv1.JobComplete, "")
	f.waitStatus(j, counts{Succeeded: 2})
}

func TestTTLDeletesTheFinishedJob(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), func(j *batchv1.Job) { j.Spec.TTLSecondsAfterFinished = ptr.To[int32](60) })
	pods := f.waitRunning(1)
	f.finish(pods[0], corev1.PodSucceeded, 0)
	f.waitCondition(j, batchv1.JobComplete, "")
	f.observed(j)
	if _, err := f.tryGet(j); err != nil {
		t.Fatalf("deleted before its TTL: %v", err)
	}
	clock.Step(61 * time.Second)
	f.touchIfThere(j)
	f.eventually("job deleted", func() (bool, string) {
		err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(j), &batchv1.Job{})
		return apierrors.IsNotFound(err), "still there"
	})
}

func TestJobsOfOtherControllersAreLeftAlone(t *testing.T) {
	f := newFixture(t)
	f.job(ptr.To[int32](1), ptr.To[int32](1), func(j *batchv1.Job) { j.Spec.ManagedBy = nil })
	f.job(ptr.To[int32](1), ptr.To[int32](1), func(j *batchv1.Job) {
		j.Name = "other"
		j.Spec.ManagedBy = ptr.To("example.com/other")
	})
	// The controller sees Jobs in the order they came: once it has handled one of its own
	// created after them (with no pods to start), it has seen and passed over the others.
	marker := f.job(ptr.To[int32](0), ptr.To[int32](1), func(j *batchv1.Job) { j.Name = "marker" })
	f.observed(marker)
	if n := len(f.pods(true)); n != 0 {
		t.Fatalf("%d pods for jobs the agent does not manage", n)
	}
}

func (f *fixture) expectEvent(j client.Object, reason string) {
	f.t.Helper()
	env.ExpectEvent(f.t, f.ns, j.GetName(), reason)
}
