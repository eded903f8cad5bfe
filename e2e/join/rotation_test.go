//go:build e2e

package join

import (
	"context"
	"fmt"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/identity"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

// member1's agent renews its 60s certificates (every ~48s) without ever losing its lease.
func TestAgentRotatesCertificates(t *testing.T) {
	// The renewals happen in the background from the join on. As a parallel test this one
	// runs once the suite's serial tests are done, by when they usually have: it then checks
	// a suite's worth of rotations instead of waiting ~90s for two of its own.
	t.Parallel()
	ctx := t.Context()
	renewals := 0
	err := framework.Until(ctx, 3*time.Minute, "two certificate renewals by member1's agent", func(ctx context.Context) (bool, string, error) {
		var csrs certificatesv1.CertificateSigningRequestList
		if err := fleet.Hub.Client.List(ctx, &csrs, client.MatchingLabels{musterv1.ClusterNameLabel: "member1"}); err != nil {
			return false, "", err
		}
		renewals = 0
		for _, csr := range csrs.Items {
			if csr.Spec.Username == identity.AgentUser("member1") && len(csr.Status.Certificate) > 0 {
				renewals++
			}
		}
		return renewals >= 2, "renewals so far: " + itoa(renewals), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mc := getCluster(t, "member1")
	c := meta.FindStatusCondition(mc.Status.Conditions, musterv1.MemberClusterAvailable)
	if c == nil || c.Status != metav1.ConditionTrue || !c.LastTransitionTime.Equal(&member1AvailableSince) {
		t.Errorf("member1's Available condition changed during rotations: %+v, True since %s", c, member1AvailableSince)
	}
	t.Logf("member1's agent renewed its certificate %d times; Available since %s without interruption", renewals, member1AvailableSince)
}

func itoa(i int) string { return fmt.Sprint(i) }
