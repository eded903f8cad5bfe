package podcontrol_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/musterhq/muster/internal/testing/envtest"
)

// TestCreateStopsAtTheRefusedBatch: eight named pods go out in batches of 1, 2, 4, 1. The
// fourth pod is invalid, so the third batch fails; its other pods are created, the last
// batch is never sent. A pod that already exists under its name counts as created and is
// still awaited; the refused pod is not awaited.
func TestCreateStopsAtTheRefusedBatch(t *testing.T) {
	f := newFixture(t)
	f.create(f.pod(podName(1), true))
	var pods []*corev1.Pod
	for i := range 8 {
		pods = append(pods, f.pod(podName(i), true))
	}
	pods[3].Spec.Containers[0].Name = "Not_A_DNS_Label"
	metricBefore := envtest.Metric(t, "muster_agent_pods_created_total", map[string]string{"kind": kind})

	created, err := f.control.Create(t.Context(), f.owner, pods)

	if err == nil || !strings.Contains(err.Error(), "creating pod p-3") {
		t.Errorf("Create error = %v, want the refusal of p-3", err)
	}
	if created != 6 {
		t.Errorf("Create counted %d pods, want 6 (p-0, p-1 already there, p-2, p-4..p-6)", created)
	}
	stored := f.stored()
	for _, n := range []string{"p-3", "p-7"} {
		if _, ok := stored[n]; ok {
			t.Errorf("%s exists; the refused pod and the batch after it must not", n)
		}
	}
	if got := envtest.Metric(t, "muster_agent_pods_created_total", map[string]string{"kind": kind}) - metricBefore; got != 6 {
		t.Errorf("muster_agent_pods_created_total grew by %v, want 6", got)
	}
	if f.satisfied("p-0", "p-2", "p-4", "p-5", "p-6") {
		t.Error("satisfied without p-1, which already existed and must still be awaited")
	}
	if !f.satisfied("p-0", "p-1", "p-2", "p-4", "p-5", "p-6") {
		t.Error("not satisfied by the six pods that exist: the refused p-3 is still awaited")
	}
}

// TestCreateAwaitsGeneratedNames: pods named by the API server are awaited under the
// names it gave them.
func TestCreateAwaitsGeneratedNames(t *testing.T) {
	f := newFixture(t)
	var pods []*corev1.Pod
	for range 3 {
		p := f.pod("", true)
		p.GenerateName = "gen-"
		pods = append(pods, p)
	}
	created, err := f.control.Create(t.Context(), f.owner, pods)
	if err != nil || created != 3 {
		t.Fatalf("Create = %d, %v; want 3, nil", created, err)
	}
	got := names(pods)
	if slices.Contains(got, "") {
		t.Fatalf("created pods without a name: %v", got)
	}
	if f.satisfied(got[:2]...) {
		t.Errorf("satisfied before the cache shows %s", got[2])
	}
	if !f.satisfied(got...) {
		t.Errorf("not satisfied by the created pods %v", got)
	}
}

// TestCreateCountsNothingWhenEveryPodIsRefused: a refused first pod, here one whose name
// the API server would generate, ends the creation; nothing is counted or awaited.
func TestCreateCountsNothingWhenEveryPodIsRefused(t *testing.T) {
	f := newFixture(t)
	bad := f.pod("", true)
	bad.GenerateName = "gen-"
	bad.Spec.Containers = nil
	created, err := f.control.Create(t.Context(), f.owner, []*corev1.Pod{bad, f.pod("never", true)})
	if err == nil || !strings.Contains(err.Error(), "creating a pod") || created != 0 {
		t.Errorf("Create = %d, %v; want 0 and the refusal", created, err)
	}
	if _, ok := f.stored()["never"]; ok {
		t.Error("the pod after a refused first batch was created")
	}
	if !f.satisfied() {
		t.Error("a refused pod is awaited")
	}
}
