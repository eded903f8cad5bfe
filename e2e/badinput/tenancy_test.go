//go:build e2e

package badinput

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/attacks"
)

// Hub namespaces a hub admin labelled with a Pod Security level.
const (
	restrictedNS = "badinput-restricted"
	privilegedNS = "badinput-privileged"
)

// TestTenancy is the attack table of a shared fleet: the attacks are refused, and the
// controls, what a hub admin allowed, run on the members, whose namespaces carry the level.
func TestTenancy(t *testing.T) {
	t.Parallel()
	createLabelledNamespaces(t)
	t.Run("refused", func(t *testing.T) {
		jobs := attacks.Jobs{
			FleetJob:     func(name string) *musterv1.FleetJob { return fleetJob(name) },
			BroadcastJob: func(name string) *musterv1.BroadcastJob { return broadcastJob(name) },
		}
		for _, row := range attacks.Tenancy(jobs, restrictedNS) {
			t.Run(row.Name, func(t *testing.T) {
				if err := attacks.Refused(t.Context(), fleet.Hub.Client, row); err != nil {
					t.Fatal(err)
				}
			})
		}
	})
	t.Run("FleetJob restricted in a namespace labelled restricted -> runs to completion", func(t *testing.T) {
		fj := fleetJob("restricted", func(fj *musterv1.FleetJob) {
			fj.Namespace = restrictedNS
			attacks.Restricted(jobPod(fj))
		})
		done := runToCompletion(t, fj)
		expectMemberLevel(t, done, restrictedNS, "restricted")
	})
	t.Run("FleetJob privileged with hostPID in a namespace labelled privileged -> runs to completion", func(t *testing.T) {
		fj := fleetJob("privileged", func(fj *musterv1.FleetJob) {
			fj.Namespace = privilegedNS
			attacks.Privileged(jobPod(fj))
		})
		done := runToCompletion(t, fj)
		expectMemberLevel(t, done, privilegedNS, "privileged")
	})
}

// createLabelledNamespaces makes the hub namespaces of the controls, and muster-agent on the
// hub, so that the refusal there is the hub's and not the API server's "not found".
func createLabelledNamespaces(t *testing.T) {
	for _, ns := range []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: restrictedNS, Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: privilegedNS, Labels: map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: musterv1.AgentNamespace}},
	} {
		if err := fleet.Hub.Client.Create(t.Context(), ns); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
}

func runToCompletion(t *testing.T, fj *musterv1.FleetJob) *musterv1.FleetJob {
	t.Helper()
	if err := fleet.Hub.Client.Create(t.Context(), fj); err != nil {
		t.Fatalf("refused: %v", err)
	}
	t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.Background(), fj) })
	return waitFleetJobComplete(t, client.ObjectKeyFromObject(fj), 2*time.Minute)
}

// expectMemberLevel checks that the namespace ns on each member that ran fj enforces level,
// as the agent labelled it when it created it.
func expectMemberLevel(t *testing.T, fj *musterv1.FleetJob, ns, level string) {
	t.Helper()
	ran := map[string]bool{}
	for _, c := range fj.Status.Clusters {
		ran[c.ClusterName] = true
	}
	for _, m := range fleet.Members {
		if !ran[m.Name] {
			continue
		}
		var got corev1.Namespace
		if err := m.Client.Get(t.Context(), client.ObjectKey{Name: ns}, &got); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if got.Labels["pod-security.kubernetes.io/enforce"] != level || got.Labels["muster.dev/created-by"] != "muster-agent" {
			t.Errorf("%s: namespace %s has labels %v, want it created by the agent with enforce=%s", m.Name, ns, got.Labels, level)
		}
	}
	if len(ran) == 0 {
		t.Errorf("FleetJob %s reports no cluster: %s", fj.Name, describe(fj.Status.Conditions))
	}
}
