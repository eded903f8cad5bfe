package broadcastjob_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// What OpenKruise admits that Muster once refused, or refuses where Muster admits on
// purpose, must still run sensibly in a member (README, "Where Muster differs from
// upstream").

// TestDeadlineZeroFailsAtOnceWithoutPods: activeDeadlineSeconds 0 is admitted, as
// OpenKruise admits it, and fails the job on its first round with DeadlineExceeded,
// before any pod is made.
func TestDeadlineZeroFailsAtOnceWithoutPods(t *testing.T) {
	f := newFixture(t)
	f.node("a")
	f.node("b")
	j := f.job(func(j *musterv1.BroadcastJob) { j.Spec.CompletionPolicy.ActiveDeadlineSeconds = new(int64(0)) })
	got := f.waitForStatus(j, musterv1.BroadcastJobFailedPh, musterv1.BroadcastCounts{Desired: 2})
	if c := meta.FindStatusCondition(got.Status.Conditions, musterv1.BroadcastJobFailed); c == nil || c.Reason != musterv1.BroadcastJobReasonDeadlineExceeded {
		t.Errorf("Failed condition %+v, want reason DeadlineExceeded", c)
	}
	// The round that wrote Failed created nothing, and a finished job creates nothing.
	if pods := f.pods(); len(pods) != 0 {
		t.Errorf("pods on %v, want none", keys(pods))
	}
}

// TestADottedNameRunsLikeAnyOther: OpenKruise refuses BroadcastJob names with a dot;
// Muster admits them, because every place the name goes takes one: the pod name
// <job>-<hash> (a DNS subdomain) and the muster.dev/broadcastjob-name label value.
func TestADottedNameRunsLikeAnyOther(t *testing.T) {
	f := newFixture(t)
	f.node("a")
	j := f.job(func(j *musterv1.BroadcastJob) { j.Name = "nightly.v2" })
	f.waitForPods("a")
	pod := f.pods()["a"]
	if !strings.HasPrefix(pod.Name, "nightly.v2-") || pod.Labels[musterv1.BroadcastJobNameLabel] != "nightly.v2" {
		t.Errorf("pod %s labelled %v, want name nightly.v2-<hash> and label %s=nightly.v2", pod.Name, pod.Labels, musterv1.BroadcastJobNameLabel)
	}
	f.finish("a", corev1.PodSucceeded)
	f.waitForStatus(j, musterv1.BroadcastJobCompleted, musterv1.BroadcastCounts{Desired: 1, Succeeded: 1})
}
