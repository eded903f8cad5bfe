package broadcastjob_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// A status write refused as invalid is announced once and retried with a growing
// backoff, however often the job's pods bring it back meanwhile.
func TestStatusWriteRefusedAsInvalidIsRetriedWithBackoff(t *testing.T) {
	f := newFixture(t)
	env.RefuseStatusWrites(t, f.ns, musterv1.GroupVersion.Group, "broadcastjobs", "refused by the test")
	refused := func() float64 {
		return env.APIRequests(t, map[string]string{"resource": "broadcastjobs", "subresource": "status", "verb": "PATCH", "code": "422"})
	}
	f.node("a")
	f.node("b")
	j := f.job()
	f.waitForPods("a", "b")
	// Each change of a pod brings the job back for a round whose status still waits to be
	// written.
	n := 0
	change := func() {
		pod := f.pods()[[]string{"a", "b"}[n%2]]
		patch := client.MergeFrom(pod.DeepCopy())
		pod.Labels["touched"] = fmt.Sprint(n)
		if err := env.Client.Patch(t.Context(), pod, patch); err != nil {
			t.Fatal(err)
		}
		n++
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
	// The backoff (1 s, 2 s, 4 s...) allows 4 writes in 10 s; one more for timing.
	if attempts := refused() - start; attempts > 5 {
		t.Errorf("%v status writes refused as invalid in %v: want at most 5", attempts, window)
	}
	reasons, err := env.EventReasons(f.ns, j.Name)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(slices.DeleteFunc(reasons, func(r string) bool { return r != musterv1.ReasonStatusWriteRefused })); n != 1 {
		t.Errorf("%d %s events, want one for the series of refusals (%v)", n, musterv1.ReasonStatusWriteRefused, reasons)
	}
}
