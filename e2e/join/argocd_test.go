//go:build e2e

package join

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/musterhq/muster/e2e/framework"
)

// expectClusterHealth runs deploy/argocd's MemberCluster health check on the cluster as
// the hub holds it now and wants status with the message of the condition that decides
// it. file names the object when MUSTER_CAPTURE_ARGOCD_TESTDATA captures testdata.
func expectClusterHealth(t *testing.T, name, file, status, condType string) {
	t.Helper()
	mc := getCluster(t, name)
	want := "no " + condType + " condition"
	if c := meta.FindStatusCondition(mc.Status.Conditions, condType); c != nil {
		want = c.Message
	}
	got, message, err := framework.ArgoCDHealth(t.Context(), fleet.Hub, mc, file)
	if err != nil {
		t.Fatal(err)
	}
	if got != status || message != want {
		t.Errorf("MemberCluster %s: Argo CD health %s %q, want %s %q", name, got, message, status, want)
	}
}
