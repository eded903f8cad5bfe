package health_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/api/versionskew"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// hubVersion is the version the suite's hub runs.
const hubVersion = "v0.4.1"

// TestAnAgentOutsideTheSkewPolicyIsFlagged: the MemberCluster says whether its agent's
// reported version is one the hub supports; an agent newer than the hub turns it False
// with a warning event, and its upgrade-order fix (the agent back at the hub's minor)
// turns it True again.
func TestAnAgentOutsideTheSkewPolicyIsFlagged(t *testing.T) {
	const name = "skewed"
	acceptedCluster(t, name)
	renew(t, name)
	waitForAgentVersion(t, name, metav1.ConditionUnknown, versionskew.ReasonAgentNotReporting)

	reportAgentVersion(t, name, "v0.3.0")
	waitForAgentVersion(t, name, metav1.ConditionTrue, versionskew.ReasonSupported)

	reportAgentVersion(t, name, "v0.5.0")
	c := waitForAgentVersion(t, name, metav1.ConditionFalse, versionskew.ReasonAgentNewer)
	if want := "agent v0.5.0 is newer than hub v0.4.1: upgrade the hub first, or run the agent at 0.4"; c.Message != want {
		t.Errorf("message %q, want %q", c.Message, want)
	}
	env.ExpectEvent(t, metav1.NamespaceDefault, name, musterv1.MemberClusterReasonUnsupportedAgentVersion)

	reportAgentVersion(t, name, "v0.4.0")
	waitForAgentVersion(t, name, metav1.ConditionTrue, versionskew.ReasonSupported)
}

// reportAgentVersion writes version into the cluster's status, as its agent reports it.
func reportAgentVersion(t *testing.T, name, version string) {
	t.Helper()
	var mc musterv1.MemberCluster
	if err := env.Client.Get(t.Context(), types.NamespacedName{Name: name}, &mc); err != nil {
		t.Fatal(err)
	}
	before := mc.DeepCopy()
	mc.Status.AgentVersion = version
	if err := env.Client.Status().Patch(t.Context(), &mc, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

func waitForAgentVersion(t *testing.T, name string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	t.Helper()
	var c *metav1.Condition
	envtest.Eventually(t, fmt.Sprintf("AgentVersionSupported=%s (%s) on %s", status, reason, name), func() (bool, string) {
		var mc musterv1.MemberCluster
		if err := env.Client.Get(t.Context(), types.NamespacedName{Name: name}, &mc); err != nil {
			return false, err.Error()
		}
		c = meta.FindStatusCondition(mc.Status.Conditions, musterv1.MemberClusterAgentVersionSupported)
		if c == nil {
			return false, "no condition"
		}
		return c.Status == status && c.Reason == reason, fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
	})
	return c
}
