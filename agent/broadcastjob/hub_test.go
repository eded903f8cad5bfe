package broadcastjob_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// The agent runs its member's BroadcastJobs, never the hub's: the hub, engaged by the same
// manager, has BroadcastJobs of its own, which the hub's controller runs.
func TestTheHubsBroadcastJobsPodsAndNodesAreNotWatched(t *testing.T) {
	f := newFixture(t)
	// Once a member job runs, the manager has engaged every cluster it will.
	f.node("a")
	f.job()
	f.waitForPods("a")
	for _, list := range []client.ObjectList{&musterv1.BroadcastJobList{}, &corev1.PodList{}, &corev1.NodeList{}} {
		watched, err := env.WatchesOnHub(t.Context(), list)
		if err != nil {
			t.Fatal(err)
		}
		if watched {
			t.Errorf("the BroadcastJob controller watches %T in the hub", list)
		}
	}
}
