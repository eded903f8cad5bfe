// Package shards holds what the hub's placing controllers share about the Works that carry
// their objects' shards: naming them (WorkName), wrapping a member object in one and reading
// it back with its fed-back status (NewWork, Decode), mapping a Work's events to its owner
// (OwnerOf), finding them by owner, removing them before the owner goes, and reporting
// what the members said about them. What goes into a shard stays with its kind.
package shards

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/musterhq/muster/api/names"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/patch"
)

// Key names a shard among its owner's: its cluster, prefixed by its WorkloadSpread
// subset when it has one.
func Key(cluster, subset string) string {
	if subset == "" {
		return cluster
	}
	return subset + "/" + cluster
}

// PartKey names a part of the shard with key among its owner's shards: the part of an
// evicted shard placed again in a cluster that may hold another shard of the same owner.
func PartKey(key, part string) string {
	if part == "" {
		return key
	}
	return key + "#" + part
}

// WorkName is the name of the Work that carries a shard of the kind's object
// namespace/name (of its WorkloadSpread subset, when not empty) in a member namespace:
// readable, and a hash of all four, so no two objects anywhere on the hub share one,
// however their namespaces and names join. Works are found by their owner's UID label,
// never by name: those an older hub named otherwise are still found.
func WorkName(kind, namespace, name, subset string) string {
	head := kind + "-" + namespace + "-" + name
	if subset != "" {
		head += "-" + subset
	}
	return names.Name(names.MaxLength, head, "", kind, namespace, name, subset)
}

// Works lists the Works labelled uidLabel=uid, by shard Key, from any reader: the API
// server, or a cache, which then filters every Work it holds (CachedWorks does not).
func Works(ctx context.Context, c client.Reader, uidLabel string, uid types.UID) (map[string]*musterv1.Work, error) {
	var list musterv1.WorkList
	if err := c.List(ctx, &list, client.MatchingLabels{uidLabel: string(uid)}); err != nil {
		return nil, fmt.Errorf("listing the shards' Works: %w", err)
	}
	return byKey(&list), nil
}

// ownerIndex indexes Works in a cache by their owner's UID, the value of whichever owner
// label they carry: a UID is unique on the hub whatever its kind.
const ownerIndex = "muster.dev/work-owner-uid"

// ownerLabels are the labels by which Works name their owner.
var ownerLabels = []string{musterv1.FleetJobUIDLabel, musterv1.BroadcastJobUIDLabel}

// indexed holds the field indexers IndexWorksByOwner has registered the index with: the
// controllers sharing a manager each ask for it, and a cache refuses an index twice. A
// process has one manager (tests and benchmarks a few), so it stays small.
var indexed = struct {
	sync.Mutex
	by map[client.FieldIndexer]bool
}{by: map[client.FieldIndexer]bool{}}

// IndexWorksByOwner registers the owner index CachedWorks reads with indexer (a
// manager's), once however often it is asked.
func IndexWorksByOwner(ctx context.Context, indexer client.FieldIndexer) error {
	indexed.Lock()
	defer indexed.Unlock()
	if indexed.by[indexer] {
		return nil
	}
	err := indexer.IndexField(ctx, &musterv1.Work{}, ownerIndex, func(o client.Object) []string {
		var uids []string
		for _, l := range ownerLabels {
			if uid := o.GetLabels()[l]; uid != "" {
				uids = append(uids, uid)
			}
		}
		return uids
	})
	if err != nil {
		return fmt.Errorf("indexing Works by owner: %w", err)
	}
	indexed.by[indexer] = true
	return nil
}

// CachedWorks is Works from a cache that has the owner index (IndexWorksByOwner): it
// reads the owner's Works only, where a label selector would have the cache filter every
// Work on the hub, a shard of every job on every member, in each round of each job.
func CachedWorks(ctx context.Context, c client.Reader, uidLabel string, uid types.UID) (map[string]*musterv1.Work, error) {
	var list musterv1.WorkList
	if err := c.List(ctx, &list, client.MatchingFields{ownerIndex: string(uid)}, client.MatchingLabels{uidLabel: string(uid)}); err != nil {
		return nil, fmt.Errorf("listing the shards' Works: %w", err)
	}
	return byKey(&list), nil
}

// byKey keys the Works of list that name a cluster by shard Key.
func byKey(list *musterv1.WorkList) map[string]*musterv1.Work {
	out := make(map[string]*musterv1.Work, len(list.Items))
	for i := range list.Items {
		l := list.Items[i].Labels
		if cluster := l[musterv1.ClusterNameLabel]; cluster != "" {
			out[PartKey(Key(cluster, l[musterv1.SubsetLabel]), l[musterv1.PartLabel])] = &list.Items[i]
		}
	}
	return out
}

// Taken returns the first of works whose name another owner's Work already holds, or
// nil. Derived names do not repeat (WorkName), but anyone who may write Works in a member
// namespace can make one by hand: Works labelled uidLabel with their owner's UID are
// checked before they are created, so a clash is reported instead of a shard silently
// missing.
func Taken(ctx context.Context, c client.Reader, works []*musterv1.Work, uidLabel string) (*musterv1.Work, error) {
	for _, w := range works {
		var cur musterv1.Work
		err := c.Get(ctx, client.ObjectKeyFromObject(w), &cur)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading Work %s/%s: %w", w.Namespace, w.Name, err)
		}
		if cur.Labels[uidLabel] != w.Labels[uidLabel] {
			return &cur, nil
		}
	}
	return nil, nil
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
	var live []string
	for key, w := range works {
		if w.DeletionTimestamp == nil {
			live = append(live, key)
		}
	}
	// A job over a thousand members has a thousand shards to let go: deleted together,
	// as they were written.
	errs := Each(len(live), func(i int) error {
		if err := c.Delete(ctx, works[live[i]]); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting the shard %s: %w", live[i], err)
		}
		return nil
	})
	if err := errors.Join(errs...); err != nil {
		return false, err
	}
	if len(works) > 0 {
		return false, nil
	}
	h := patch.NewHelper(c, owner)
	controllerutil.RemoveFinalizer(owner, musterv1.ShardsFinalizer)
	if err := h.Patch(ctx, owner); client.IgnoreNotFound(err) != nil {
		return false, fmt.Errorf("removing the shards finalizer: %w", err)
	}
	return true, nil
}
