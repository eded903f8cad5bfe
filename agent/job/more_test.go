package job_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestShardOfADividedJobShowsFleetIndexes(t *testing.T) {
	f := newFixture(t)
	f.job(ptr.To[int32](2), ptr.To[int32](2), indexedMode, func(j *batchv1.Job) {
		j.Annotations = map[string]string{musterv1.IndexOffsetAnnotation: "10"}
	})
	pods := f.waitRunning(2)
	for _, p := range pods {
		local, _ := strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation])
		global := strconv.Itoa(local + 10)
		env := p.Spec.Containers[0].Env[0]
		if p.Annotations[musterv1.GlobalIndexAnnotation] != global || env.Value != global || p.Spec.Hostname != "job-"+global || !strings.HasPrefix(p.Name, "job-"+global+"-") {
			t.Errorf("pod %s for local index %d: annotation %q env %+v hostname %q, want fleet index %s in each",
				p.Name, local, p.Annotations[musterv1.GlobalIndexAnnotation], env, p.Spec.Hostname, global)
		}
	}
}

func TestZeroParallelismStartsNothing(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](0), ptr.To[int32](3))
	time.Sleep(500 * time.Millisecond)
	got := f.get(j)
	if len(f.pods(true)) != 0 || jobFinishedOrEnding(got) || got.Status.StartTime == nil {
		t.Errorf("parallelism 0: %d pods, conditions %s, startTime %v", len(f.pods(true)), conditions(got), got.Status.StartTime)
	}
}

func jobFinishedOrEnding(j *batchv1.Job) bool {
	return hasCondition(j, batchv1.JobComplete) || hasCondition(j, batchv1.JobFailed) || hasCondition(j, batchv1.JobFailureTarget) || hasCondition(j, batchv1.JobSuccessCriteriaMet)
}

func TestZeroCompletionsCompletesAtOnce(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](0))
	done := f.waitCondition(j, batchv1.JobComplete, batchv1.JobReasonCompletionsReached)
	if len(f.pods(true)) != 0 || done.Status.Succeeded != 0 {
		t.Errorf("completions 0: %d pods, succeeded %d", len(f.pods(true)), done.Status.Succeeded)
	}
}

func TestCounterNeverDecreasesWhenPodsGoAfterTheEnd(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](2))
	pods := f.waitRunning(2)
	for _, p := range pods {
		f.finish(p, corev1.PodSucceeded, 0)
	}
	f.waitCondition(j, batchv1.JobComplete, "")
	for _, p := range f.pods(true) {
		if err := env.Client.Delete(t.Context(), &p); err != nil {
			t.Fatal(err)
		}
	}
	f.touch(j)
	time.Sleep(500 * time.Millisecond)
	if got := countsOf(&f.get(j).Status); got != (counts{Succeeded: 2}) {
		t.Errorf("after the pods went: %+v", got)
	}
	if n := len(f.pods(true)); n != 0 {
		t.Errorf("a complete job made %d new pods", n)
	}
}

func TestCompletionTimeIsAfterStartTime(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1))
	pods := f.waitRunning(1)
	clock.Step(3 * time.Second)
	f.finish(pods[0], corev1.PodSucceeded, 0)
	done := f.waitCondition(j, batchv1.JobComplete, "")
	if done.Status.CompletionTime.Before(done.Status.StartTime) {
		t.Errorf("completionTime %v before startTime %v", done.Status.CompletionTime, done.Status.StartTime)
	}
}

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

func TestFailureTargetComesBeforeFailed(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), backoff(0))
	pods := f.waitRunning(1)
	f.finish(pods[0], corev1.PodFailed, 1)
	failed := f.waitCondition(j, batchv1.JobFailed, "")
	var order []batchv1.JobConditionType
	for _, c := range failed.Status.Conditions {
		order = append(order, c.Type)
	}
	if len(order) < 2 || order[0] != batchv1.JobFailureTarget || order[len(order)-1] != batchv1.JobFailed {
		t.Errorf("conditions %v: want FailureTarget first and Failed last", order)
	}
}

func TestFailedJobIsDeletedAfterItsTTL(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), backoff(0), func(j *batchv1.Job) { j.Spec.TTLSecondsAfterFinished = ptr.To[int32](0) })
	pods := f.waitRunning(1)
	f.finish(pods[0], corev1.PodFailed, 1)
	f.touchIfThere(j)
	f.eventually("failed job deleted", func() (bool, string) {
		err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(j), &batchv1.Job{})
		return err != nil, "still there"
	})
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

func TestSuccessPolicyWithSucceededCount(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](4), ptr.To[int32](4), indexedMode, func(j *batchv1.Job) {
		j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](2)}}}
	})
	pods := f.waitRunning(4)
	f.finish(pods[0], corev1.PodSucceeded, 0)
	time.Sleep(300 * time.Millisecond)
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

func TestIndexedCompletedIndexesWithGaps(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](4), ptr.To[int32](4), indexedMode)
	pods := f.waitRunning(4)
	for _, p := range pods {
		if i := p.Annotations[batchv1.JobCompletionIndexAnnotation]; i == "0" || i == "2" || i == "3" {
			f.finish(p, corev1.PodSucceeded, 0)
		}
	}
	f.waitStatus(j, counts{Active: 1, Succeeded: 3, Completed: "0,2,3"})
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
	f.touch(j)
	time.Sleep(300 * time.Millisecond)
	if n := len(f.running()); n != 2 {
		t.Fatalf("a failed index was retried: %d running", n)
	}
	f.finish(byIndex["1"], corev1.PodSucceeded, 0)
	f.finish(byIndex["2"], corev1.PodSucceeded, 0)
	f.waitCondition(j, batchv1.JobFailed, batchv1.JobReasonFailedIndexes)
	f.waitStatus(j, counts{Succeeded: 2, Failed: 1, Completed: "1,2", FailedIndexes: "0"})
}

func TestDuplicatePodOfAnIndexIsRemoved(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), indexedMode)
	pods := f.waitRunning(1)
	// A second, newer pod for index 0, as a restarted controller might find; the older
	// one stays (creation times have a one-second grain).
	time.Sleep(1100 * time.Millisecond)
	dup := pods[0].DeepCopy()
	dup.ObjectMeta = metav1.ObjectMeta{
		GenerateName: "job-0-", Namespace: f.ns, Labels: dup.Labels, Annotations: dup.Annotations,
		OwnerReferences: dup.OwnerReferences, Finalizers: dup.Finalizers,
	}
	dup.Status = corev1.PodStatus{}
	if err := env.Client.Create(t.Context(), dup); err != nil {
		t.Fatal(err)
	}
	f.touch(j)
	f.eventually("one pod left for index 0", func() (bool, string) {
		running := f.running()
		return len(running) == 1 && running[0].UID == pods[0].UID, strconv.Itoa(len(running))
	})
}

func TestForegroundDeletionReleasesPodsAndStartsNone(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](4))
	f.waitRunning(2)
	if err := env.Client.Delete(t.Context(), f.get(j), client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatal(err)
	}
	// No garbage collector runs here: the job stays, marked for deletion.
	f.eventually("pods released", func() (bool, string) {
		for _, p := range f.pods(true) {
			if len(p.Finalizers) > 0 && p.Finalizers[0] == batchv1.JobTrackingFinalizer && p.Status.Phase != "" {
				return false, p.Name
			}
		}
		return true, ""
	})
	time.Sleep(300 * time.Millisecond)
	if n := len(f.pods(true)); n > 2 {
		t.Fatalf("%d pods for a job being deleted", n)
	}
}

func TestPodsAreOwnedByTheJob(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1))
	pods := f.waitRunning(1)
	ref := metav1.GetControllerOf(&pods[0])
	if ref == nil || ref.Kind != "Job" || ref.Name != j.Name || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		t.Errorf("controller reference %+v", ref)
	}
	if pods[0].Labels[batchv1.JobNameLabel] != j.Name || pods[0].Labels[musterv1.ControllerLabel] != "job" {
		t.Errorf("labels %v", pods[0].Labels)
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

func TestEventsForCreateDeleteAndFailure(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](2), backoff(0))
	pods := f.waitRunning(2)
	f.finish(pods[0], corev1.PodFailed, 1)
	f.waitCondition(j, batchv1.JobFailed, "")
	for _, reason := range []string{"SuccessfulCreate", "SuccessfulDelete", batchv1.JobReasonBackoffLimitExceeded} {
		f.expectEvent(j, reason)
	}
}

func TestReadyNeverExceedsActive(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](2))
	pods := f.waitRunning(2)
	f.setReady(pods[0])
	f.setReady(pods[1])
	f.waitStatus(j, counts{Active: 2, Ready: 2})
	f.finish(pods[0], corev1.PodSucceeded, 0)
	f.waitStatus(j, counts{Active: 1, Ready: 1, Succeeded: 1})
}

func TestManagedByIsKeptOnTheJob(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1))
	got := f.get(j)
	if ptr.Deref(got.Spec.ManagedBy, "") != musterv1.AgentManagedBy {
		t.Fatalf("managedBy %v", got.Spec.ManagedBy)
	}
	// The API server refuses to change it: the job stays the agent's.
	patch := client.MergeFrom(got.DeepCopy())
	got.Spec.ManagedBy = ptr.To("example.com/other")
	err := env.Client.Patch(context.Background(), got, patch)
	if err == nil || !strings.Contains(err.Error(), "immutable") {
		t.Fatalf("changing managedBy: %v", err)
	}
}

// TestIndexedJobWithTheLargestCompletionsRunsByParallelism: the API server admits Indexed
// completions up to 2^31-1; such a job runs its lowest indexes at its parallelism and
// records finished ones as a range, as the built-in controller does.
func TestIndexedJobWithTheLargestCompletionsRunsByParallelism(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](math.MaxInt32), func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	})
	for round := range 3 {
		pods := f.waitRunning(2)
		var got []string
		for _, p := range pods {
			got = append(got, p.Annotations[batchv1.JobCompletionIndexAnnotation])
			f.finish(p, corev1.PodSucceeded, 0)
		}
		slices.Sort(got)
		if want := []string{fmt.Sprint(2 * round), fmt.Sprint(2*round + 1)}; !slices.Equal(got, want) {
			t.Fatalf("round %d runs indexes %v, want %v", round, got, want)
		}
	}
	f.waitStatus(j, counts{Active: 2, Ready: 0, Succeeded: 6, Terminating: 0, Completed: "0-5"})
}
