package job_test

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestPodsAreOwnedByTheJob(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1))
	pods := f.waitRunning(1)
	ref := metav1.GetControllerOf(&pods[0])
	if ref == nil || ref.Kind != "Job" || ref.Name != j.Name || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		t.Errorf("controller reference %+v", ref)
	}
	if pods[0].Labels[batchv1.JobNameLabel] != j.Name || pods[0].Labels[musterv1.ControllerLabel] != "job" {
		t.Errorf("labels %v", pods[0].Labels)
	}
}

func TestManagedByIsKeptOnTheJob(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1))
	got := f.get(j)
	if ptr.Deref(got.Spec.ManagedBy, "") != musterv1.AgentManagedBy {
		t.Fatalf("managedBy %v", got.Spec.ManagedBy)
	}
	// The API server refuses to change it: the job stays the agent's.
	patch := client.MergeFrom(got.DeepCopy())
	got.Spec.ManagedBy = ptr.To("example.com/other")
	err := env.Client.Patch(context.Background(), got, patch)
	if err == nil || !strings.Contains(err.Error(), "immutable") {
		t.Fatalf("changing managedBy: %v", err)
	}
}

// The agent runs its member's Jobs, never the hub's: the hub, engaged by the same manager,
// has Jobs of its own (and the agent no right to read them there).
func TestTheHubsJobsAndPodsAreNotWatched(t *testing.T) {
	f := newFixture(t)
	// Once a member Job runs, the manager has engaged every cluster it will.
	f.job(ptr.To[int32](1), ptr.To[int32](1))
	f.waitRunning(1)
	for _, list := range []client.ObjectList{&batchv1.JobList{}, &corev1.PodList{}} {
		watched, err := env.WatchesOnHub(t.Context(), list)
		if err != nil {
			t.Fatal(err)
		}
		if watched {
			t.Errorf("the Job controller watches %T in the hub", list)
		}
	}
}
