// Package shards holds what the hub's placing controllers share about the Works that carry
// their objects' shards: finding them by owner, and removing them before the owner goes.
package shards

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Works lists the Works labelled uidLabel=uid, by the cluster they go to.
func Works(ctx context.Context, c client.Client, uidLabel string, uid types.UID) (map[string]*musterv1.Work, error) {
	var list musterv1.WorkList
	if err := c.List(ctx, &list, client.MatchingLabels{uidLabel: string(uid)}); err != nil {
		return nil, fmt.Errorf("listing the shards' Works: %w", err)
	}
	out := make(map[string]*musterv1.Work, len(list.Items))
	for i := range list.Items {
		if cluster := list.Items[i].Labels[musterv1.ClusterNameLabel]; cluster != "" {
			out[cluster] = &list.Items[i]
		}
	}
	return out, nil
}

// Release deletes owner's Works and, once none is left, takes ShardsFinalizer off owner.
// Each agent deletes its shard and pods before its Work goes, so done means the member
// objects are gone too; until then the Works' deletion events bring the owner back.
func Release(ctx context.Context, c client.Client, owner client.Object, uidLabel string) (done bool, err error) {
	if !controllerutil.ContainsFinalizer(owner, musterv1.ShardsFinalizer) {
		return true, nil
	}
	works, err := Works(ctx, c, uidLabel, owner.GetUID())
	if err != nil {
		return false, err
	}
	for cluster, w := range works {
		if w.DeletionTimestamp != nil {
			continue
		}
		if err := c.Delete(ctx, w); client.IgnoreNotFound(err) != nil {
			return false, fmt.Errorf("deleting the shard for cluster %s: %w", cluster, err)
		}
	}
	if len(works) > 0 {
		return false, nil
	}
	controllerutil.RemoveFinalizer(owner, musterv1.ShardsFinalizer)
	return true, client.IgnoreNotFound(c.Update(ctx, owner))
}
