package broadcastjob_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/agent/broadcastjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// TestPodsWithoutSchedulerNeedsAreBoundDirectly: a template that asks the scheduler for
// nothing the agent does not check gets its pods bound by nodeName, still carrying the
// node affinity the kubelet checks; the requests of the other tests' template keep their
// pods with the scheduler (TestOnePodPerEligibleNodeThenComplete).
func TestPodsWithoutSchedulerNeedsAreBoundDirectly(t *testing.T) {
	f := newFixture(t)
	f.node("a")
	f.job(func(j *musterv1.BroadcastJob) {
		j.Spec.Template.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
	})
	f.waitForPods("a")
	pod := f.pods()["a"]
	if pod.Spec.NodeName != f.pool+"-a" {
		t.Errorf("nodeName = %q, want %s-a", pod.Spec.NodeName, f.pool)
	}
	if terms := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms; len(terms) != 1 || terms[0].MatchFields[0].Values[0] != f.pool+"-a" {
		t.Errorf("the directly bound pod lost its node affinity term: %+v", terms)
	}
}

func TestOnePodPerEligibleNodeThenComplete(t *testing.T) {
	f := newFixture(t)
	f.node("a")
	f.node("b")
	f.node("tainted", func(n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}}
	})
	f.node("cordoned", func(n *corev1.Node) { n.Spec.Unschedulable = true })
	f.node("small", func(n *corev1.Node) {
		n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: k8sresource.MustParse("500m")}
	})
	j := f.job()
	f.waitForPods("a", "b")
	f.waitForStatus(j, musterv1.BroadcastJobRunning, musterv1.BroadcastCounts{Desired: 2, Active: 2})

	pod := f.pods()["a"]
	terms := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || terms[0].MatchFields[0].Values[0] != f.pool+"-a" || pod.Spec.NodeName != "" {
		t.Errorf("the pod is not bound to its node by a metadata.name affinity term: %+v nodeName %q", terms, pod.Spec.NodeName)
	}
	if pod.Labels["app"] != "probe" || pod.Labels[musterv1.BroadcastJobNameLabel] != "bcj" || !metav1.IsControlledBy(pod, j) {
		t.Errorf("pod labels %v / owners %v do not carry the template and the job", pod.Labels, pod.OwnerReferences)
	}

	f.finish("a", corev1.PodSucceeded)
	f.waitForStatus(j, musterv1.BroadcastJobRunning, musterv1.BroadcastCounts{Desired: 2, Active: 1, Succeeded: 1})
	f.finish("b", corev1.PodSucceeded)
	done := f.waitForStatus(j, musterv1.BroadcastJobCompleted, musterv1.BroadcastCounts{Desired: 2, Succeeded: 2})
	if done.Status.CompletionTime == nil || done.Status.StartTime == nil {
		t.Errorf("startTime %v completionTime %v: want both set", done.Status.StartTime, done.Status.CompletionTime)
	}
	// A node that appears after completion gets nothing under completionPolicy Always.
	f.node("late")
	f.observed(j)
	if pods := f.pods(); len(pods) != 2 {
		t.Errorf("a completed job created pods on a new node: %v", keys(pods))
	}
	f.expectEvent(j, musterv1.BroadcastJobReasonCompleted)
}

func TestParallelismPercentIsNeverExceeded(t *testing.T) {
	f := newFixture(t)
	var names []string
	for _, n := range []string{"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9"} {
		f.node(n)
		names = append(names, n)
	}
	j := f.job(func(j *musterv1.BroadcastJob) { j.Spec.Parallelism = new(intstr.FromString("25%")) })
	// 25% of 10 rounds up to 3 pods at a time.
	peak := 0
	for finished := 0; finished < len(names); {
		var running []string
		f.eventually("pods to run", func() (bool, string) {
			running = running[:0]
			for n, p := range f.pods() {
				if p.Status.Phase == "" || p.Status.Phase == corev1.PodPending || p.Status.Phase == corev1.PodRunning {
					running = append(running, n)
				}
			}
			return len(running) == min(3, len(names)-finished), strings.Join(running, ",")
		})
		peak = max(peak, len(running))
		slices.Sort(running)
		f.finish(running[0], corev1.PodSucceeded)
		finished++
		f.observed(j)
		if n := countActive(f.pods()); n > 3 {
			t.Fatalf("%d pods active with parallelism 25%% of 10", n)
		}
	}
	got := f.waitForStatus(j, musterv1.BroadcastJobCompleted, musterv1.BroadcastCounts{Desired: 10, Succeeded: 10})
	if peak != 3 || got.Status.Parallelism == nil || *got.Status.Parallelism != 3 {
		t.Errorf("peak %d active, status.parallelism %v; want 3 and 3", peak, got.Status.Parallelism)
	}
}

func countActive(pods map[string]*corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			n++
		}
	}
	return n
}

func TestFailFastStopsRunningPods(t *testing.T) {
	f := newFixture(t)
	f.node("a")
	f.node("b")
	f.node("c")
	j := f.job(func(j *musterv1.BroadcastJob) { j.Spec.FailurePolicy.Type = musterv1.FailureFailFast })
	f.waitForPods("a", "b", "c")
	f.finish("a", corev1.PodSucceeded)
	f.finish("b", corev1.PodFailed)
	// The pod it stops counts as failed, as in OpenKruise.
	got := f.waitForStatus(j, musterv1.BroadcastJobFailedPh, musterv1.BroadcastCounts{Desired: 3, Succeeded: 1, Failed: 2})
	f.waitForPods("a", "b")
	c := meta.FindStatusCondition(got.Status.Conditions, musterv1.BroadcastJobFailed)
	if c.Reason != musterv1.BroadcastJobReasonPodFailed || !strings.Contains(c.Message, f.pool+"-b") {
		t.Errorf("Failed condition %+v: want reason PodFailed naming node b", c)
	}
}

// Continue means failures do not fail the job: once every node is done it completes, as
// in OpenKruise, and says how many pods failed.
func TestContinueRunsEveryNodeAndCompletes(t *testing.T) {
	f := newFixture(t)
	f.node("a")
	f.node("b")
	j := f.job(func(j *musterv1.BroadcastJob) { j.Spec.FailurePolicy.Type = musterv1.FailureContinue })
	f.waitForPods("a", "b")
	f.finish("a", corev1.PodFailed)
	f.waitForStatus(j, musterv1.BroadcastJobRunning, musterv1.BroadcastCounts{Desired: 2, Active: 1, Failed: 1})
	f.finish("b", corev1.PodSucceeded)
	got := f.waitForStatus(j, musterv1.BroadcastJobCompleted, musterv1.BroadcastCounts{Desired: 2, Succeeded: 1, Failed: 1})
	if c := meta.FindStatusCondition(got.Status.Conditions, musterv1.BroadcastJobComplete); c == nil || !strings.Contains(c.Message, "1 failed") {
		t.Errorf("Complete condition %+v: want it to say 1 pod failed", c)
	}
	if meta.IsStatusConditionTrue(got.Status.Conditions, musterv1.BroadcastJobFailed) {
		t.Errorf("a Continue job that completed is also Failed: %+v", got.Status.Conditions)
	}
}

func TestPauseOnFailureIsPersistedAndResumes(t *testing.T) {
	f := newFixture(t)
	f.node("a")
	f.node("b")
	f.node("c")
	j := f.job(func(j *musterv1.BroadcastJob) {
		j.Spec.FailurePolicy.Type = musterv1.FailurePause
		j.Spec.Parallelism = new(intstr.FromInt32(1))
	})
	f.waitForPods("a")
	f.finish("a", corev1.PodFailed)
	f.eventually("spec.paused set by the failure, and said so", func() (bool, string) {
		got := f.get(j)
		c := meta.FindStatusCondition(got.Status.Conditions, musterv1.BroadcastJobPaused)
		return got.Spec.Paused && got.Status.Phase == musterv1.BroadcastJobPausedPh && c.Reason == musterv1.BroadcastJobReasonPausedOnFailure,
			fmt.Sprintf("paused %v phase %s condition %+v", got.Spec.Paused, got.Status.Phase, c)
	})
	f.observed(j)
	if pods := f.pods(); len(pods) != 1 {
		t.Fatalf("a paused job created pods: %v", keys(pods))
	}
	// Unpausing resumes without pausing again for the same failure.
	f.setPaused(j, false)
	f.waitForPods("a", "b")
	f.finish("b", corev1.PodSucceeded)
	f.waitForPods("a", "b", "c")
	if got := f.get(j); got.Spec.Paused {
		t.Fatal("the job paused again for a failure it had already paused on")
	}
	f.finish("c", corev1.PodSucceeded)
	f.waitForStatus(j, musterv1.BroadcastJobFailedPh, musterv1.BroadcastCounts{Desired: 3, Succeeded: 2, Failed: 1})
	f.expectEvent(j, musterv1.BroadcastJobReasonPausedOnFailure)
}

func TestPausedCreatesNothingUntilUnpaused(t *testing.T) {
	f := newFixture(t)
	f.node("a")
	j := f.job(func(j *musterv1.BroadcastJob) { j.Spec.Paused = true })
	f.waitForStatus(j, musterv1.BroadcastJobPausedPh, musterv1.BroadcastCounts{Desired: 1})
	if pods := f.pods(); len(pods) != 0 {
		t.Fatalf("a paused job created pods: %v", keys(pods))
	}
	f.setPaused(j, false)
	f.waitForPods("a")
	f.waitForStatus(j, musterv1.BroadcastJobRunning, musterv1.BroadcastCounts{Desired: 1, Active: 1})
}

// TestPausedDeletesNothingUntilResumed: a node that disappears while the job is paused
// keeps its pod until the job resumes, and desired counts the nodes that remain.
func TestPausedDeletesNothingUntilResumed(t *testing.T) {
	f := newFixture(t)
	f.node("a")
	b := f.node("b")
	j := f.job()
	f.waitForPods("a", "b")
	f.setPaused(j, true)
	f.waitForStatus(j, musterv1.BroadcastJobPausedPh, musterv1.BroadcastCounts{Desired: 2, Active: 2})
	if err := env.Client.Delete(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	f.waitForStatus(j, musterv1.BroadcastJobPausedPh, musterv1.BroadcastCounts{Desired: 1, Active: 2})
	f.observed(j)
	if pods := f.pods(); len(pods) != 2 {
		t.Fatalf("a paused job deleted the pod of a node that disappeared: pods on %v", keys(pods))
	}
	f.setPaused(j, false)
	f.waitForPods("a")
	f.finish("a", corev1.PodSucceeded)
	f.waitForStatus(j, musterv1.BroadcastJobCompleted, musterv1.BroadcastCounts{Desired: 1, Succeeded: 1})
	f.expectEvent(j, musterv1.ReasonSuccessfulDelete)
}

func TestNeverServesNewNodesAndNeverCompletes(t *testing.T) {
	f := newFixture(t)
	f.node("a")
	j := f.job(func(j *musterv1.BroadcastJob) { j.Spec.CompletionPolicy.Type = musterv1.CompletionNever })
	f.waitForPods("a")
	f.finish("a", corev1.PodSucceeded)
	f.waitForStatus(j, musterv1.BroadcastJobRunning, musterv1.BroadcastCounts{Desired: 1, Succeeded: 1})
	f.node("b")
	f.waitForPods("a", "b")
	f.finish("b", corev1.PodSucceeded)
	f.waitForStatus(j, musterv1.BroadcastJobRunning, musterv1.BroadcastCounts{Desired: 2, Succeeded: 2})
	// A node relabelled into the pool is new work too.
	outside := f.node("outside", func(n *corev1.Node) { n.Labels["pool"] = "elsewhere" })
	outside.Labels["pool"] = f.pool
	if err := env.Client.Update(t.Context(), outside); err != nil {
		t.Fatal(err)
	}
	f.waitForPods("a", "b", "outside")
}

func TestNoEligibleNodesIsPendingWithReasons(t *testing.T) {
	f := newFixture(t)
	f.node("tainted", func(n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoExecute}}
	})
	j := f.job()
	got := f.waitForStatus(j, musterv1.BroadcastJobPending, musterv1.BroadcastCounts{})
	c := meta.FindStatusCondition(got.Status.Conditions, musterv1.BroadcastJobNodesEligible)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != musterv1.BroadcastJobReasonNoEligibleNodes || !strings.Contains(c.Message, "the pod does not tolerate") {
		t.Errorf("NodesEligible = %+v: want False/NoEligibleNodes naming the taint", c)
	}
	f.expectEvent(j, musterv1.BroadcastJobReasonNoEligibleNodes)
	// Tolerating the taint through a new node appearing is not needed: a fitting node
	// turns the job into a running one.
	f.node("ok")
	f.waitForPods("ok")
	f.waitForStatus(j, musterv1.BroadcastJobRunning, musterv1.BroadcastCounts{Desired: 1, Active: 1})
}

func TestPodOnANodeThatNoLongerFitsIsDeleted(t *testing.T) {
	f := newFixture(t)
	f.node("a")
	b := f.node("b")
	j := f.job()
	f.waitForPods("a", "b")
	b.Spec.Taints = []corev1.Taint{{Key: "evict", Effect: corev1.TaintEffectNoExecute}}
	if err := env.Client.Update(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	f.waitForPods("a")
	f.finish("a", corev1.PodSucceeded)
	f.waitForStatus(j, musterv1.BroadcastJobCompleted, musterv1.BroadcastCounts{Desired: 1, Succeeded: 1})
	f.expectEvent(j, musterv1.ReasonSuccessfulDelete)
}

// A cordon means "no new pods here", not "evict": the pod on a node cordoned while it
// runs goes on and finishes there, and the node stays desired. OpenKruise deletes that
// pod and stops counting the node (README, "Where Muster differs from upstream").
func TestCordonKeepsTheRunningPodAndTheNode(t *testing.T) {
	f := newFixture(t)
	a := f.node("a")
	j := f.job()
	f.waitForPods("a")
	a.Spec.Unschedulable = true
	if err := env.Client.Update(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	// A node that joins after the cordon: once it has its pod, the controller has decided
	// from a cache that shows the cordon.
	f.node("b")
	f.waitForPods("a", "b")
	f.waitForStatus(j, musterv1.BroadcastJobRunning, musterv1.BroadcastCounts{Desired: 2, Active: 2})
	f.finish("a", corev1.PodSucceeded)
	f.finish("b", corev1.PodSucceeded)
	f.waitForStatus(j, musterv1.BroadcastJobCompleted, musterv1.BroadcastCounts{Desired: 2, Succeeded: 2})
}

func TestActiveDeadlineFailsAndStopsPods(t *testing.T) {
	f := newFixture(t)
	f.node("a")
	f.node("b")
	j := f.job(func(j *musterv1.BroadcastJob) { j.Spec.CompletionPolicy.ActiveDeadlineSeconds = new(int64(30)) })
	f.waitForPods("a", "b")
	f.finish("a", corev1.PodSucceeded)
	f.waitForStatus(j, musterv1.BroadcastJobRunning, musterv1.BroadcastCounts{Desired: 2, Active: 1, Succeeded: 1})
	clock.Step(31 * time.Second)
	f.touch(j)
	// The pod it stops counts as failed, as in OpenKruise.
	got := f.waitForStatus(j, musterv1.BroadcastJobFailedPh, musterv1.BroadcastCounts{Desired: 2, Succeeded: 1, Failed: 1})
	f.waitForPods("a")
	if c := meta.FindStatusCondition(got.Status.Conditions, musterv1.BroadcastJobFailed); c.Reason != musterv1.BroadcastJobReasonDeadlineExceeded {
		t.Errorf("Failed reason %s, want DeadlineExceeded", c.Reason)
	}
}

func TestTTLDeletesTheFinishedJob(t *testing.T) {
	f := newFixture(t)
	f.node("a")
	j := f.job(func(j *musterv1.BroadcastJob) { j.Spec.CompletionPolicy.TTLSecondsAfterFinished = new(int32(60)) })
	f.waitForPods("a")
	f.finish("a", corev1.PodSucceeded)
	f.waitForStatus(j, musterv1.BroadcastJobCompleted, musterv1.BroadcastCounts{Desired: 1, Succeeded: 1})
	f.observed(j)
	f.get(j) // still there before the TTL
	clock.Step(61 * time.Second)
	f.touch(j)
	f.eventually("the job deleted after its TTL", func() (bool, string) {
		err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(j), &musterv1.BroadcastJob{})
		return apierrors.IsNotFound(err), "still there"
	})
}

func TestRestartLimitFailsThePodWithoutFreeingItsNode(t *testing.T) {
	f := newFixture(t)
	f.node("a")
	j := f.job(func(j *musterv1.BroadcastJob) {
		j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		j.Spec.FailurePolicy.RestartLimit = 1
	})
	f.waitForPods("a")
	pod := f.pods()["a"]
	pod.Status.Phase = corev1.PodRunning
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "probe", RestartCount: 2, Image: "busybox", ImageID: "x"}}
	if err := env.Client.Status().Update(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	got := f.waitForStatus(j, musterv1.BroadcastJobFailedPh, musterv1.BroadcastCounts{Desired: 1, Failed: 1})
	_ = got
	stopped := f.pods()["a"]
	if stopped == nil || stopped.Annotations[musterv1.RestartLimitExceededAnnotation] != "2" || stopped.Spec.ActiveDeadlineSeconds == nil {
		t.Fatalf("the pod was not marked and given a deadline: %+v", stopped)
	}
	f.expectEvent(j, musterv1.BroadcastJobReasonRestartLimitExceeded)
}

func TestAPodTheControllerDidNotCreateForANodeIsNotDuplicated(t *testing.T) {
	f := newFixture(t)
	f.node("a")
	f.node("b")
	// Play a controller that crashed after creating a's pod and before recording it:
	// the job exists with that pod already, under the one name a's pod can have.
	j := f.job(func(j *musterv1.BroadcastJob) { j.Spec.Paused = true })
	cur := f.get(j)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: broadcastjob.PodName("bcj", f.pool+"-a"), Namespace: f.ns,
			Labels:          map[string]string{musterv1.BroadcastJobUIDLabel: string(cur.UID)},
			Annotations:     map[string]string{musterv1.NodeAnnotation: f.pool + "-a"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cur, musterv1.GroupVersion.WithKind("BroadcastJob"))},
		},
		Spec: *cur.Spec.Template.Spec.DeepCopy(),
	}
	if err := env.Client.Create(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	f.setPaused(j, false)
	f.waitForPods("a", "b")
	var list corev1.PodList
	if err := env.Client.List(t.Context(), &list, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 {
		t.Fatalf("%d pods for 2 nodes", len(list.Items))
	}
}

func (f *fixture) expectEvent(j client.Object, reason string) {
	f.t.Helper()
	env.ExpectEvent(f.t, f.ns, j.GetName(), reason)
}

// TestTerminateAnnotationWakesTheJob: the controller ignores the job's status-only updates
// (its own writes), but an annotation change, such as the hub terminating the shard, is
// acted on at once even though no pod changes.
func TestTerminateAnnotationWakesTheJob(t *testing.T) {
	f := newFixture(t)
	f.node("a")
	j := f.job()
	f.waitForPods("a")
	f.waitForStatus(j, musterv1.BroadcastJobRunning, musterv1.BroadcastCounts{Desired: 1, Active: 1})
	// Let the passes the pod's creation queued run first, so that only the annotation can
	// wake the job. The sleep does not stand for an observation: it outlasts the batch
	// period of those passes (200ms), after which nothing else is queued.
	time.Sleep(time.Second)

	cur := f.get(j)
	patch := client.MergeFrom(cur.DeepCopy())
	cur.Annotations = map[string]string{musterv1.TerminateAnnotation: "stopped on the hub"}
	if err := env.Client.Patch(t.Context(), cur, patch); err != nil {
		t.Fatal(err)
	}
	f.eventually("the job failed as terminated", func() (bool, string) {
		got := f.get(j)
		c := meta.FindStatusCondition(got.Status.Conditions, musterv1.BroadcastJobFailed)
		return got.Status.Phase == musterv1.BroadcastJobFailedPh && c != nil && c.Reason == musterv1.BroadcastJobReasonTerminated,
			fmt.Sprintf("phase %s conditions %+v", got.Status.Phase, got.Status.Conditions)
	})
}
