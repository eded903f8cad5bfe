package envtest

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// HubOf creates the hub namespace of the member cluster clusterName and returns the hub
// as that cluster's agent sees it: a cluster whose cache holds only that namespace. The
// agent's tests use one API server as both hub and member; the caller starts the cluster
// (add it to a manager, or to a multicluster provider). opts apply after those.
func (e *Environment) HubOf(ctx context.Context, clusterName string, opts ...cluster.Option) (cluster.Cluster, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: musterv1.MemberNamespace(clusterName)}}
	if err := e.Client.Create(ctx, ns); err != nil {
		return nil, fmt.Errorf("creating the hub namespace of %s: %w", clusterName, err)
	}
	return cluster.New(e.Config, append([]cluster.Option{func(o *cluster.Options) {
		o.Scheme = scheme.Scheme
		o.Cache = cache.Options{DefaultNamespaces: map[string]cache.Config{ns.Name: {}}}
	}}, opts...)...)
}
