package broadcastjob_test

import (
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bcj "github.com/musterhq/muster/api/broadcastjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/broadcastjob"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// env is a real kube-apiserver: the writes are checked against what it stores and what it
// refuses, not against a fake client.
var env *envtest.Environment

func TestMain(m *testing.M) { os.Exit(envtest.MainWith(m, &env, nil)) }

func job(t *testing.T) *musterv1.BroadcastJob {
	t.Helper()
	j := &musterv1.BroadcastJob{
		ObjectMeta: metav1.ObjectMeta{Name: "bj", Namespace: env.Namespace(t)},
		Spec: musterv1.BroadcastJobSpec{
			FailurePolicy: musterv1.FailurePolicy{Type: musterv1.FailurePause},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
			}},
		},
	}
	if err := env.Client.Create(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	return j
}

func stored(t *testing.T, j *musterv1.BroadcastJob) *musterv1.BroadcastJob {
	t.Helper()
	out := &musterv1.BroadcastJob{}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(j), out); err != nil {
		t.Fatal(err)
	}
	return out
}

// recorded drains the events recorded so far.
func recorded(rec *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// A pause on failure sets spec.paused and the failure count it paused at in one write,
// and announces it; a pause decided on a stale read is refused and announces nothing,
// so a user's unpause made meanwhile is not undone.
func TestPauseOnFailure(t *testing.T) {
	j := job(t)
	stale := j.DeepCopy()
	rec := events.NewFakeRecorder(10)
	w := broadcastjob.Writer{Client: env.Client, Recorder: rec}
	if err := w.PauseOnFailure(t.Context(), j, 3, "the job"); err != nil {
		t.Fatal(err)
	}
	got := stored(t, j)
	if !got.Spec.Paused || bcj.PausedAt(got) != 3 || bcj.PausesNow(got, 3) {
		t.Errorf("after pausing at 3 failures: paused=%v, pausedAt=%d", got.Spec.Paused, bcj.PausedAt(got))
	}
	if ev := recorded(rec); len(ev) != 1 || ev[0] != "Warning PausedOnFailure paused the job after 3 failed pods (failurePolicy Pause)" {
		t.Errorf("events = %q", ev)
	}

	err := w.PauseOnFailure(t.Context(), stale, 4, "the job")
	if !apierrors.IsConflict(err) {
		t.Errorf("pausing from a stale read: %v, want a conflict", err)
	}
	if ev := recorded(rec); len(ev) != 0 {
		t.Errorf("a refused pause recorded %q", ev)
	}
	if got := stored(t, j); bcj.PausedAt(got) != 3 {
		t.Errorf("a refused pause changed pausedAt to %d", bcj.PausedAt(got))
	}
}

// Status is written with its transitions announced after the write; the same status again
// writes and announces nothing; a status decided on a stale read of a shared status is
// refused and announces nothing.
func TestUpdateStatus(t *testing.T) {
	j := job(t)
	stale := j.DeepCopy()
	rec := events.NewFakeRecorder(10)
	w := broadcastjob.Writer{Client: env.Client, Recorder: rec}
	status := musterv1.BroadcastJobStatus{BroadcastCounts: musterv1.BroadcastCounts{Succeeded: 2, Desired: 2}}
	bcj.SetCondition(&status, musterv1.BroadcastJobComplete, metav1.ConditionTrue, musterv1.BroadcastJobReasonCompleted, "2 of 2 pods succeeded")
	if err := w.UpdateStatus(t.Context(), j, status); err != nil {
		t.Fatal(err)
	}
	got := stored(t, j)
	if !meta.IsStatusConditionTrue(got.Status.Conditions, musterv1.BroadcastJobComplete) || got.Status.Succeeded != 2 {
		t.Errorf("stored status = %+v", got.Status)
	}
	if ev := recorded(rec); len(ev) != 1 || ev[0] != "Normal Completed 2 of 2 pods succeeded" {
		t.Errorf("events = %q", ev)
	}
	rv := got.ResourceVersion

	if err := w.UpdateStatus(t.Context(), got, *got.Status.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	if ev := recorded(rec); len(ev) != 0 {
		t.Errorf("an unchanged status recorded %q", ev)
	}
	if got := stored(t, j); got.ResourceVersion != rv {
		t.Errorf("an unchanged status was written: resourceVersion %s → %s", rv, got.ResourceVersion)
	}

	failed := musterv1.BroadcastJobStatus{BroadcastCounts: musterv1.BroadcastCounts{Failed: 1}}
	bcj.SetCondition(&failed, musterv1.BroadcastJobFailed, metav1.ConditionTrue, musterv1.BroadcastJobReasonPodFailed, "pod failed")
	if err := w.UpdateStatus(t.Context(), stale, failed); !apierrors.IsConflict(err) {
		t.Errorf("writing a shared status from a stale read: %v, want a conflict", err)
	}
	if ev := recorded(rec); len(ev) != 0 {
		t.Errorf("a refused status write recorded %q", ev)
	}
	if got := stored(t, j); meta.IsStatusConditionTrue(got.Status.Conditions, musterv1.BroadcastJobFailed) {
		t.Error("a refused status write reached the API server")
	}
}
