package webhook

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Limits bound what one member may store on the hub.
type Limits struct {
	// MaxNodesPerMember is how many nodes of one member the hub keeps at most: its agent
	// may create that many divided by musterv1.MaxNodesPerSlice NodeSlices, rounded up.
	MaxNodesPerMember int
}

// NodeSlicesPerMember is how many NodeSlices l lets one member hold.
func (l Limits) NodeSlicesPerMember() int {
	return (l.MaxNodesPerMember + musterv1.MaxNodesPerSlice - 1) / musterv1.MaxNodesPerSlice
}

// nodeSliceValidator keeps a member from growing the hub without bound: an agent may
// write only in its own namespace (RBAC), but there it could create any number of
// NodeSlices, each of 500 nodes, and the API server, etcd and the hub's inventory would
// hold them all. It is called on creates only (a slice's nodes are bounded by its schema,
// and its clusterName cannot change), so the agents' frequent rewrites never wait on it.
type nodeSliceValidator struct {
	// reader counts the namespace's slices from the API server: a cache that lags would
	// let a burst of creates through.
	reader client.Reader
	limits Limits
}

func (v nodeSliceValidator) ValidateCreate(ctx context.Context, s *musterv1.NodeSlice) (admission.Warnings, error) {
	kind := musterv1.GroupVersion.WithKind("NodeSlice").GroupKind()
	cluster, ok := strings.CutPrefix(s.Namespace, musterv1.MemberNamespacePrefix)
	if !ok || s.ClusterName != cluster {
		return nil, refuse(ctx, kind, s.Name, field.ErrorList{field.Invalid(field.NewPath("clusterName"), s.ClusterName,
			fmt.Sprintf("a NodeSlice in namespace %s must name its cluster, %q: a member reports its own nodes only", s.Namespace, cluster))})
	}
	limit := v.limits.NodeSlicesPerMember()
	var have metav1.PartialObjectMetadataList
	have.SetGroupVersionKind(musterv1.GroupVersion.WithKind("NodeSliceList"))
	// One more than the limit is all the count needs: the list never grows with what a
	// member stored beyond it.
	if err := v.reader.List(ctx, &have, client.InNamespace(s.Namespace), client.Limit(int64(limit+1))); err != nil {
		return nil, fmt.Errorf("counting the NodeSlices of cluster %s: %w", cluster, err)
	}
	if len(have.Items) >= limit {
		return nil, refuse(ctx, kind, s.Name, field.ErrorList{field.Forbidden(field.NewPath("metadata", "namespace"),
			fmt.Sprintf("cluster %s already has %d NodeSlices, the most the hub keeps for one member (--max-nodes-per-member=%d, %d nodes a slice); placement uses the nodes they hold",
				cluster, len(have.Items), v.limits.MaxNodesPerMember, musterv1.MaxNodesPerSlice))})
	}
	return nil, nil
}

func (nodeSliceValidator) ValidateUpdate(context.Context, *musterv1.NodeSlice, *musterv1.NodeSlice) (admission.Warnings, error) {
	return nil, nil
}

func (nodeSliceValidator) ValidateDelete(context.Context, *musterv1.NodeSlice) (admission.Warnings, error) {
	return nil, nil
}
