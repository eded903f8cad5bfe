package webhook

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OwnerClusterRole is the hub's ClusterRole, which every installation of the hub makes
// (the muster-hub chart: helm install and musterctl init alike) and removes when it is
// uninstalled. The webhook configurations the hub registers name it as their owner, so
// that the garbage collector deletes them with it: helm uninstall, which knows nothing of
// objects the hub made itself, then leaves no webhook refusing writes of kinds nothing
// serves any more.
const OwnerClusterRole = "muster-hub"

// owner is the reference to the hub's ClusterRole; nil when there is none (a hub run
// without its RBAC installed, as in tests).
func owner(ctx context.Context, c client.Client) (*metav1.OwnerReference, error) {
	var role rbacv1.ClusterRole
	err := c.Get(ctx, client.ObjectKey{Name: OwnerClusterRole}, &role)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ClusterRole %s, the webhook configurations' owner: %w", OwnerClusterRole, err)
	}
	return &metav1.OwnerReference{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole", Name: role.Name, UID: role.UID}, nil
}

// withOwner returns refs with o among them, and whether it had to be added.
func withOwner(refs []metav1.OwnerReference, o *metav1.OwnerReference) ([]metav1.OwnerReference, bool) {
	if o == nil {
		return refs, false
	}
	for _, r := range refs {
		if r.UID == o.UID {
			return refs, false
		}
	}
	return append(refs, *o), true
}
