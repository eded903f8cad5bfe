// Package nodeslice loads the NodeSlices that agents write into the hub's inventory.
//
// The Reconciler watches NodeSlices in every member namespace. A slice's cluster is taken
// from its namespace (muster-member-<cluster>), never from its content, because an agent can
// write only in its own namespace: no agent can place nodes in another cluster's inventory.
package nodeslice

import (
	"context"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/inventory"
)

// +kubebuilder:rbac:groups=muster.dev,resources=nodeslices,verbs=get;list;watch

// Reconciler loads NodeSlices into the Inventory.
type Reconciler struct {
	Client    client.Client
	Inventory *inventory.Inventory
}

// SetupWithManager registers the reconciler.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("inventory").
		For(&musterv1.NodeSlice{}).
		Complete(r)
}

// Reconcile mirrors one NodeSlice into the inventory.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster, ok := strings.CutPrefix(req.Namespace, musterv1.MemberNamespacePrefix)
	if !ok || cluster == "" {
		// Only agents write NodeSlices, and only in their member namespace.
		return ctrl.Result{}, nil
	}
	var slice musterv1.NodeSlice
	err := r.Client.Get(ctx, req.NamespacedName, &slice)
	if apierrors.IsNotFound(err) {
		return ctrl.Result{}, r.Inventory.DeleteSlice(req.Namespace, req.Name)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if slice.ClusterName != cluster {
		log.FromContext(ctx).Info("NodeSlice names another cluster than its namespace; using the namespace's",
			"nodeSlice", req.NamespacedName, "clusterName", slice.ClusterName, "cluster", cluster)
	}
	return ctrl.Result{}, r.Inventory.ReplaceSlice(cluster, &slice)
}
