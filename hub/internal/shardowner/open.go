// Package shardowner holds the opening every hub reconciler of a kind that ships shards
// through Works runs before it decides anything: read the object, skip a copy older than
// the reconciler's own last status write, release the shards of a deleted object, and
// hold the shards finalizer. FleetJob and BroadcastJob share it, so the two cannot drift.
package shardowner

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/shards"
	"github.com/musterhq/muster/internal/patch"
)

// releaseRecheck is how soon a deleted owner whose Works still exist is looked at again:
// the Works' deletion events bring it back sooner; this covers a lost one.
const releaseRecheck = 10 * time.Second

// Opening is one reconciler's view of its owners' shards and status writes.
type Opening struct {
	Client client.Client
	// UIDLabel is the Work label that carries the owner's UID.
	UIDLabel string
	// Writes are the owners' status writes the cache may not show yet; Refusals paces the
	// writes the API server refused. Both are the reconciler's own, forgotten here when an
	// owner is deleted.
	Writes   *patch.Writes
	Refusals *patch.Refusals
}

// Open reads the owner named by key into obj. done says Reconcile is over and returns
// res and err: the owner is gone, the cache has not caught up with the last status write
// yet, or the owner is being deleted (its shards are then released, also when it no longer
// asks for any: shards placed before still go first).
func (o Opening) Open(ctx context.Context, key client.ObjectKey, obj client.Object) (res ctrl.Result, done bool, err error) {
	if err := o.Client.Get(ctx, key, obj); err != nil {
		return ctrl.Result{}, true, client.IgnoreNotFound(err)
	}
	if err := o.Writes.Check(obj); err != nil {
		res, err := patch.Requeue(err)
		return res, true, err
	}
	if obj.GetDeletionTimestamp() == nil {
		return ctrl.Result{}, false, nil
	}
	o.Writes.Forget(obj.GetUID())
	o.Refusals.Forget(obj.GetUID())
	released, err := shards.Release(ctx, o.Client, obj, o.UIDLabel)
	if err != nil || released {
		res, err := patch.Requeue(err)
		return res, true, err
	}
	return ctrl.Result{RequeueAfter: releaseRecheck}, true, nil
}

// HoldShards puts the shards finalizer on obj, so that its Works are released before it
// goes.
func (o Opening) HoldShards(ctx context.Context, obj client.Object) error {
	h := patch.NewHelper(o.Client, obj)
	if !controllerutil.AddFinalizer(obj, musterv1.ShardsFinalizer) {
		return nil
	}
	if err := h.Patch(ctx, obj); err != nil {
		return fmt.Errorf("adding the shards finalizer: %w", err)
	}
	return nil
}
