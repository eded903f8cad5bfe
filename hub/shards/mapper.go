package shards

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// OwnerOf maps an event of a shard's Work to a request for the owner that the Work's
// nameLabel and namespaceLabel name; a Work without both belongs to another kind (or
// to nobody) and maps to nothing.
func OwnerOf(nameLabel, namespaceLabel string) handler.MapFunc {
	return func(_ context.Context, o client.Object) []reconcile.Request {
		l := o.GetLabels()
		name, ns := l[nameLabel], l[namespaceLabel]
		if name == "" || ns == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
	}
}
