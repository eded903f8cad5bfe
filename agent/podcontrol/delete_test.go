package podcontrol_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/internal/testing/envtest"
)

const hold = "example.com/hold"

// TestDeleteReleasesFirstAndSparesARecreatedPod: a pod holding the finalizer is released
// and then gone; a pod already gone counts as deleted; a pod recreated under the name of
// the one read is spared by the UID precondition, reported, and not awaited.
func TestDeleteReleasesFirstAndSparesARecreatedPod(t *testing.T) {
	f := newFixture(t)
	held, plain, gone, replaced := f.pod("held", true), f.pod("plain", true), f.pod("gone", true), f.pod("replaced", true)
	held.Finalizers = []string{hold}
	f.create(held, plain, gone, replaced)
	if err := env.Client.Delete(t.Context(), gone); err != nil {
		t.Fatal(err)
	}
	stale := replaced.DeepCopy()
	if err := env.Client.Delete(t.Context(), replaced); err != nil {
		t.Fatal(err)
	}
	f.create(f.pod("replaced", true))
	metricBefore := envtest.Metric(t, "muster_agent_pods_deleted_total", map[string]string{"kind": kind})

	deleted, err := f.control.Delete(t.Context(), f.owner, []*corev1.Pod{held, plain, gone, stale}, hold)

	if err == nil {
		t.Error("deleting a pod recreated under its name succeeded")
	}
	if got, want := names(deleted), []string{"held", "plain", "gone"}; !slices.Equal(got, want) {
		t.Errorf("deleted %v, want %v", got, want)
	}
	stored := f.stored()
	for _, n := range []string{"held", "plain", "gone"} {
		if _, ok := stored[n]; ok {
			t.Errorf("pod %s still exists", n)
		}
	}
	if _, ok := stored["replaced"]; !ok {
		t.Error("the recreated pod was deleted")
	}
	if got := envtest.Metric(t, "muster_agent_pods_deleted_total", map[string]string{"kind": kind}) - metricBefore; got != 3 {
		t.Errorf("muster_agent_pods_deleted_total grew by %v, want 3", got)
	}
	if !f.satisfied("held", "plain", "gone", "replaced") {
		t.Error("not satisfied with the deleted pods gone: the spared pod is still awaited")
	}
}

// TestReleaseRemovesOnlyItsFinalizer: the other finalizers stay, and a pod already gone
// needs no release.
func TestReleaseRemovesOnlyItsFinalizer(t *testing.T) {
	f := newFixture(t)
	p := f.pod("p", true)
	p.Finalizers = []string{"example.com/other", hold}
	f.create(p)
	t.Cleanup(func() {
		_ = env.Client.Patch(t.Context(), &corev1.Pod{ObjectMeta: p.ObjectMeta}, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))
	})
	gone := f.pod("gone", true)

	if err := f.control.Release(t.Context(), f.owner, []*corev1.Pod{p, gone}, hold); err != nil {
		t.Fatal(err)
	}
	if got := f.stored()["p"].Finalizers; !slices.Equal(got, []string{"example.com/other"}) {
		t.Errorf("finalizers = %v, want only example.com/other", got)
	}
	if !f.satisfied("p") {
		t.Error("not satisfied by the released pod")
	}
}
