package job_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// A status write the API server refuses as invalid is a bug that writing the same again
// does not fix: the agent says so once (a Warning event) and retries with a growing
// backoff, however often the Job's pods and metadata change meanwhile, never at the speed
// of those changes or of the work queue's retries.
func TestStatusWriteRefusedAsInvalidIsRetriedWithBackoff(t *testing.T) {
	f := newFixture(t)
	env.RefuseStatusWrites(t, f.ns, "batch", "jobs", "refused by the test")
	refused := func() float64 {
		return env.APIRequests(t, map[string]string{"resource": "jobs", "subresource": "status", "verb": "PUT", "code": "422"})
	}
	j := f.job(ptr.To[int32](2), ptr.To[int32](4))
	pods := f.waitRunning(2)
	// Changes that each bring the Job back for a round that writes its status: a pod
	// turning ready or not (status.ready), and the Job's annotations.
	flips := 0
	change := func() {
		f.setReadiness(pods[flips%2], flips/2%2 == 0)
		f.touch(j)
		flips++
	}
	// The policy takes a moment to apply: the first refusal, announced, says it does.
	f.eventually("a refused status write announced", func() (bool, string) {
		change()
		reasons, err := env.EventReasons(f.ns, j.Name)
		return err == nil && slices.Contains(reasons, musterv1.ReasonStatusWriteRefused), fmt.Sprint(reasons, err)
	})
	start := refused()

	window := 10 * time.Second
	for end := time.Now().Add(window); time.Now().Before(end); {
		change()
		time.Sleep(100 * time.Millisecond)
	}
	attempts := refused() - start
	// The backoff (1 s, 2 s, 4 s...) allows 4 writes in 10 s; one more for timing.
	if attempts > 5 {
		t.Errorf("%v status writes refused as invalid in %v: want at most 5", attempts, window)
	}
	reasons, err := env.EventReasons(f.ns, j.Name)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(slices.DeleteFunc(reasons, func(r string) bool { return r != musterv1.ReasonStatusWriteRefused })); n != 1 {
		t.Errorf("%d %s events, want one for the series of refusals (%s)", n, musterv1.ReasonStatusWriteRefused, fmt.Sprint(reasons))
	}
}
