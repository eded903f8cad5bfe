package envtest

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/musterhq/muster/agent"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// HubOf creates the hub namespace of the member cluster clusterName and returns the hub
// as that cluster's agent sees it (agent.HubCluster): a cluster whose cache holds only
// that namespace. The
// agent's tests use one API server as both hub and member; the caller starts the cluster
// (add it to a manager, or to a multicluster provider). opts apply after those.
func (e *Environment) HubOf(ctx context.Context, clusterName string, opts ...cluster.Option) (cluster.Cluster, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: musterv1.MemberNamespace(clusterName)}}
	if err := e.Client.Create(ctx, ns); err != nil {
		return nil, fmt.Errorf("creating the hub namespace of %s: %w", clusterName, err)
	}
	return agent.HubCluster(e.Config, clusterName, opts...)
}
