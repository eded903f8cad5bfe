package broadcastjob_test

import (
	"fmt"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// A status write refused as invalid is announced once and retried with a growing
// backoff, however often the job's pods bring it back meanwhile.
func TestStatusWriteRefusedAsInvalidIsRetriedWithBackoff(t *testing.T) {
	f := newFixture(t)
	env.RefuseStatusWrites(t, f.ns, musterv1.GroupVersion.Group, "broadcastjobs", "refused by the test")
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
	env.ExpectPacedRefusals(t, f.ns, j.Name, map[string]string{"resource": "broadcastjobs", "subresource": "status", "verb": "PATCH", "code": "422"}, change)
}
