package job_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// A status write the API server refuses as invalid is a bug that writing the same again
// does not fix: the agent says so once (a Warning event) and retries with a growing
// backoff, however often the Job's pods and metadata change meanwhile, never at the speed
// of those changes or of the work queue's retries.
func TestStatusWriteRefusedAsInvalidIsRetriedWithBackoff(t *testing.T) {
	f := newFixture(t)
	env.RefuseStatusWrites(t, f.ns, "batch", "jobs", "refused by the test")
	j := f.job(ptr.To[int32](2), ptr.To[int32](4))
	// The status holds no count of the pods (its writes are refused): a round that saw the
	// Job after its pods came says the controller is done creating.
	var pods []corev1.Pod
	f.eventually("2 running pods", func() (bool, string) {
		pods = f.running()
		return len(pods) == 2, fmt.Sprintf("%d running", len(pods))
	})
	f.observed(j)
	if n := len(f.running()); n != 2 {
		t.Fatalf("%d pods running, want 2", n)
	}
	// Changes that each bring the Job back for a round that writes its status: a pod
	// turning ready or not (status.ready), and the Job's annotations.
	flips := 0
	change := func() {
		f.setReadiness(pods[flips%2], flips/2%2 == 0)
		f.touch(j)
		flips++
	}
	env.ExpectPacedRefusals(t, f.ns, j.Name, map[string]string{"resource": "jobs", "subresource": "status", "verb": "PUT", "code": "422"}, change)
}
