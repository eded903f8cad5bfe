package job_test

import (
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

// markUnschedulable plays the scheduler failing to place p since the given time.
func (f *fixture) markUnschedulable(p corev1.Pod, since time.Time) {
	f.t.Helper()
	cur := &corev1.Pod{}
	if err := env.Client.Get(f.t.Context(), client.ObjectKeyFromObject(&p), cur); err != nil {
		f.t.Fatal(err)
	}
	cur.Status.Phase = corev1.PodPending
	cur.Status.Conditions = []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/3 nodes are available: 3 Insufficient cpu.", LastTransitionTime: metav1.NewTime(since),
	}}
	if err := env.Client.Status().Update(f.t.Context(), cur); err != nil {
		f.t.Fatal(err)
	}
}

func TestUnschedulablePodsShowOnTheJobSinceTheFirstOfThem(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](3), nil)
	pods := f.waitRunning(3)
	first := time.Now().Add(-time.Minute).Truncate(time.Second)
	f.markUnschedulable(pods[0], first.Add(20*time.Second))
	f.markUnschedulable(pods[1], first)

	// A round may run between the two marks and report the first pod alone: wait for
	// the round that saw both.
	var got *batchv1.Job
	f.eventually("PodsUnschedulable for 2 pods", func() (bool, string) {
		got = f.get(j)
		for _, c := range got.Status.Conditions {
			if c.Type == musterv1.JobPodsUnschedulable && c.Status == corev1.ConditionTrue && strings.HasPrefix(c.Message, "2 pods cannot be scheduled") {
				return true, ""
			}
		}
		return false, conditions(got)
	})
	for _, c := range got.Status.Conditions {
		if c.Type != musterv1.JobPodsUnschedulable {
			continue
		}
		if !c.LastTransitionTime.Time.Equal(first) || !strings.HasPrefix(c.Message, "2 pods cannot be scheduled: 0/3 nodes are available") {
			t.Errorf("condition since %v with message %q, want since %v and 2 pods with the scheduler's message", c.LastTransitionTime, c.Message, first)
		}
	}

	// Once scheduled, the condition turns False; the job itself is untouched.
	f.setReady(pods[0])
	f.setReady(pods[1])
	f.eventually("PodsUnschedulable False", func() (bool, string) {
		got = f.get(j)
		for _, c := range got.Status.Conditions {
			if c.Type == musterv1.JobPodsUnschedulable {
				return c.Status == corev1.ConditionFalse && c.Reason == "Scheduled", conditions(got)
			}
		}
		return false, conditions(got)
	})
	if got.Status.Active != 3 || jobFinishedOrEnding(got) {
		t.Errorf("after scheduling: active %d, conditions %s", got.Status.Active, conditions(got))
	}
}
