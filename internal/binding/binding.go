// Package binding writes the binding of a member cluster to the key and join of the agent
// certificate about to be approved. The hub's approver and `musterctl accept` both approve
// agent certificates, and both must record the binding the same way before approving.
package binding

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/identity"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/patch"
)

// Bind records the key and join id of csr as mc's agent key and current join
// (identity.Bind), under the optimistic lock: a join recorded by someone else meanwhile
// makes the write fail rather than be overwritten.
func Bind(ctx context.Context, c client.Client, mc *musterv1.MemberCluster, csr *certificatesv1.CertificateSigningRequest) error {
	req, err := identity.ParseAgentCSR(csr)
	if err != nil {
		return err
	}
	if req.Cluster != mc.Name {
		return fmt.Errorf("binding cluster %s to the agent certificate of cluster %s", mc.Name, req.Cluster)
	}
	h := patch.NewHelper(c, mc)
	if !identity.Bind(mc, req) {
		return nil
	}
	if err := h.Patch(ctx, mc); err != nil {
		return fmt.Errorf("binding cluster %s to key %s and join %s: %w", mc.Name, req.Key, req.JoinID, err)
	}
	return nil
}
