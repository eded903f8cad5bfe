package job_test

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

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
	f.observed(j)
	if n := len(f.pods(true)); n > 2 {
		t.Fatalf("%d pods for a job being deleted", n)
	}
}
