package health_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/builders"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// acceptedCluster creates an accepted cluster and its member namespace.
func acceptedCluster(t *testing.T, name string) {
	t.Helper()
	mc := builders.MakeMemberCluster(name).Accepted().Obj()
	mc.UID = ""
	if err := env.Client.Create(t.Context(), mc); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: musterv1.MemberNamespace(name)}}); err != nil {
		t.Fatal(err)
	}
}

// TestTransitionsAreAnnounced: an operator watching events sees a cluster become
// available and, later, stop heartbeating; the condition says why and for how long.
func TestTransitionsAreAnnounced(t *testing.T) {
	acceptedCluster(t, "announced")
	renew(t, "announced")
	waitForAvailability(t, "announced", metav1.ConditionTrue, false)
	env.ExpectEvent(t, metav1.NamespaceDefault, "announced", musterv1.MemberClusterReasonAvailable)

	clock.SetTime(clock.Now().Add(grace + 5*time.Second))
	touch(t, "announced")
	waitForAvailability(t, "announced", metav1.ConditionUnknown, true)
	env.ExpectEvent(t, metav1.NamespaceDefault, "announced", musterv1.MemberClusterReasonUnreachable)

	// The taint changed the spec: the verdict is recorded for the tainted generation too,
	// or a reader comparing observedGeneration takes it for stale.
	var c *metav1.Condition
	envtest.Eventually(t, "the verdict recorded for the cluster's generation", func() (bool, string) {
		var mc musterv1.MemberCluster
		if err := env.Client.Get(t.Context(), types.NamespacedName{Name: "announced"}, &mc); err != nil {
			return false, err.Error()
		}
		c = meta.FindStatusCondition(mc.Status.Conditions, musterv1.MemberClusterAvailable)
		return c.ObservedGeneration == mc.Generation, fmt.Sprintf("condition at generation %d, cluster at %d", c.ObservedGeneration, mc.Generation)
	})
	if c.Reason != musterv1.MemberClusterReasonAgentStoppedRenewing || c.Message != "the agent last renewed its lease 45s ago (grace period 40s)" {
		t.Errorf("condition %s: %s, want the agent's silence and its length", c.Reason, c.Message)
	}
}

// TestALeaseInTheGraceIsStillAvailable: a lease renewed less than the grace period ago
// keeps the cluster available, whatever else changes on the lease.
func TestALeaseInTheGraceIsStillAvailable(t *testing.T) {
	acceptedCluster(t, "in-grace")
	renew(t, "in-grace")
	waitForAvailability(t, "in-grace", metav1.ConditionTrue, false)
	clock.SetTime(clock.Now().Add(grace - time.Second))
	reconciled := func() float64 {
		return envtest.Metric(t, "controller_runtime_reconcile_total", map[string]string{"controller": "health"})
	}
	before := reconciled()
	touch(t, "in-grace")
	envtest.Eventually(t, "the touched lease looked at", func() (bool, string) {
		return reconciled() > before, fmt.Sprint(reconciled() - before)
	})
	waitForAvailability(t, "in-grace", metav1.ConditionTrue, false)
}
