package inventory_test

import (
	"context"
	"os"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/musterhq/muster/agent/inventory"
	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// cluster is the member the reporter reports; one API server is both it and the hub.
const cluster = "inv"

var env *envtest.Environment

// sliceLists counts the reporter's lists of its NodeSlices on the hub.
var sliceLists atomic.Int64

// TestMain runs the node reporter as the agent does (nodes read from the manager's cache,
// written to the hub through an uncached client) for cluster, whose MemberCluster and
// member namespace exist on the hub from the start.
func TestMain(m *testing.M) {
	os.Exit(envtest.MainWith(m, &env, func(ctx context.Context, e *envtest.Environment) error {
		mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}, Spec: musterv1.MemberClusterSpec{Accepted: true}}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: musterv1.MemberNamespace(cluster)}}
		for _, o := range []client.Object{mc, ns} {
			if err := e.Client.Create(ctx, o); err != nil {
				return err
			}
		}
		disco, err := discovery.NewDiscoveryClientForConfig(e.Config)
		if err != nil {
			return err
		}
		direct, err := client.NewWithWatch(e.Config, client.Options{Scheme: scheme.Scheme})
		if err != nil {
			return err
		}
		hub := interceptor.NewClient(direct, interceptor.Funcs{
			List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				if _, ok := list.(*musterv1.NodeSliceList); ok {
					sliceLists.Add(1)
				}
				return c.List(ctx, list, opts...)
			},
		})
		return e.StartManager(ctx, func(mgr ctrl.Manager) error {
			return (&inventory.Reporter{Member: mgr.GetClient(), Discovery: disco, Hub: hub, Cluster: cluster}).SetupWithManager(mgr)
		})
	}))
}
