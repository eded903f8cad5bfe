package inventory

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/patch"
	musterversion "github.com/musterhq/muster/internal/version"
)

// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch

const (
	// Throttle is the shortest time between two reports.
	Throttle = time.Second
	// Resync rewrites the report even when no node changed, repairing anything lost.
	Resync = 5 * time.Minute
)

// reportKey is the only key the reporter's queue holds: every node change asks for the
// same whole-cluster report.
var reportKey = reconcile.Request{NamespacedName: types.NamespacedName{Name: "nodes"}}

// Reporter writes the member's node inventory to the hub.
type Reporter struct {
	// Member reads nodes from the member's cache.
	Member client.Client
	// Discovery reads the member's Kubernetes version.
	Discovery discovery.ServerVersionInterface
	// Hub writes NodeSlices and the MemberCluster's status with the agent's identity.
	Hub     client.Client
	Cluster string
	// Clock stamps the reports; nil is the real clock.
	Clock clock.PassiveClock

	// refusals paces the MemberCluster's status writes after the API server refused one
	// as invalid. Its refusals are logged only: the agent may not write events about a
	// cluster-scoped object.
	refusals patch.Refusals
	// written is what this agent last read or wrote of its NodeSlices on the hub, by name,
	// and listedAt when it last listed them. A report between resyncs writes from it
	// rather than listing every slice (each up to 500 nodes) from the hub again; a resync,
	// or any failed write, lists them again. Only Reconcile, one at a time, uses them.
	written  map[string]*musterv1.NodeSlice
	listedAt time.Time
}

// SetupWithManager watches the member's nodes.
func (r *Reporter) SetupWithManager(mgr ctrl.Manager) error {
	enqueue := func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) { q.AddAfter(reportKey, Throttle) }
	throttled := handler.TypedFuncs[*corev1.Node, reconcile.Request]{
		CreateFunc: func(_ context.Context, _ event.TypedCreateEvent[*corev1.Node], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(q)
		},
		UpdateFunc: func(_ context.Context, _ event.TypedUpdateEvent[*corev1.Node], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(q)
		},
		DeleteFunc: func(_ context.Context, _ event.TypedDeleteEvent[*corev1.Node], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(q)
		},
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("node-inventory").
		WatchesRawSource(source.Kind(mgr.GetCache(), &corev1.Node{}, throttled)).
		Complete(r)
}

// Reconcile reports every node of the member.
func (r *Reporter) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	var nodes corev1.NodeList
	if err := r.Member.List(ctx, &nodes); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing member nodes: %w", err)
	}
	if err := r.writeSlices(ctx, BuildSlices(r.Cluster, nodes.Items)); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.writeStatus(ctx, nodes.Items); err != nil {
		return patch.Requeue(err)
	}
	return ctrl.Result{RequeueAfter: Resync}, nil
}

// writeSlices creates or updates the slices that changed and deletes the ones no longer
// needed, comparing with what it last read or wrote. A write that fails (a conflict with
// another writer, a slice deleted behind its back) makes the next report list them again.
func (r *Reporter) writeSlices(ctx context.Context, want []musterv1.NodeSlice) error {
	if r.written == nil || r.now().Sub(r.listedAt) >= Resync/2 {
		if err := r.listSlices(ctx); err != nil {
			return err
		}
	}
	if err := r.applySlices(ctx, want); err != nil {
		r.written = nil
		return err
	}
	return nil
}

func (r *Reporter) listSlices(ctx context.Context) error {
	var have musterv1.NodeSliceList
	if err := r.Hub.List(ctx, &have, client.InNamespace(musterv1.MemberNamespace(r.Cluster))); err != nil {
		return fmt.Errorf("listing NodeSlices on the hub: %w", err)
	}
	r.written = make(map[string]*musterv1.NodeSlice, len(have.Items))
	for i := range have.Items {
		r.written[have.Items[i].Name] = &have.Items[i]
	}
	r.listedAt = r.now()
	return nil
}

func (r *Reporter) applySlices(ctx context.Context, want []musterv1.NodeSlice) error {
	wanted := make(map[string]bool, len(want))
	for i := range want {
		w := &want[i]
		wanted[w.Name] = true
		got, ok := r.written[w.Name]
		switch {
		case !ok:
			if err := r.Hub.Create(ctx, w); err != nil {
				return fmt.Errorf("creating NodeSlice %s: %w", w.Name, err)
			}
			r.written[w.Name] = w
		case Differs(got, w):
			update := Rewritten(got, w)
			if err := r.Hub.Update(ctx, update); err != nil {
				return fmt.Errorf("updating NodeSlice %s: %w", w.Name, err)
			}
			r.written[w.Name] = update
		}
	}
	for name, stale := range r.written {
		if wanted[name] {
			continue
		}
		if err := r.Hub.Delete(ctx, stale); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting NodeSlice %s: %w", name, err)
		}
		delete(r.written, name)
	}
	return nil
}

func (r *Reporter) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}

// NeedsReport decides whether the MemberCluster's status must be written: when the agent's
// view of the nodes (want) differs from the stored one (have), or when the stored report
// time is older than half the resync period, so that every resync refreshes it and the
// hub can tell a silent agent from a cluster whose nodes did not change.
func NeedsReport(have, want *musterv1.MemberClusterStatus, now time.Time) bool {
	if have.LastInventoryReportTime == nil || now.Sub(have.LastInventoryReportTime.Time) >= Resync/2 {
		return true
	}
	stamped := want.DeepCopy()
	stamped.LastInventoryReportTime = have.LastInventoryReportTime
	return !equality.Semantic.DeepEqual(have, stamped)
}

// writeStatus records version, node counts and allocatable totals, and that the agent is
// joined, on the cluster's MemberCluster.
func (r *Reporter) writeStatus(ctx context.Context, nodes []corev1.Node) error {
	version, err := r.Discovery.ServerVersion()
	if err != nil {
		return fmt.Errorf("reading the member's version: %w", err)
	}
	counts, allocatable := Summarize(nodes)
	var mc musterv1.MemberCluster
	if err := r.Hub.Get(ctx, types.NamespacedName{Name: r.Cluster}, &mc); err != nil {
		return fmt.Errorf("reading MemberCluster %s: %w", r.Cluster, err)
	}
	before := mc.DeepCopy()
	mc.Status.Version = version.GitVersion
	mc.Status.AgentVersion = musterversion.Get()
	mc.Status.Nodes = &counts
	mc.Status.Allocatable = allocatable
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
		Type: musterv1.MemberClusterJoined, Status: metav1.ConditionTrue, Reason: musterv1.MemberClusterReasonAgentConnected,
		Message: "the agent holds a hub certificate and reports", ObservedGeneration: mc.Generation,
	})
	now := r.now()
	if !NeedsReport(&before.Status, &mc.Status, now) {
		return nil
	}
	mc.Status.LastInventoryReportTime = &metav1.Time{Time: now}
	if err := r.refusals.Check(&mc); err != nil {
		return fmt.Errorf("reporting status of MemberCluster %s: %w", r.Cluster, err)
	}
	merge := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
	if err := r.refusals.Observe(ctx, nil, &mc, r.Hub.Status().Patch(ctx, &mc, merge)); err != nil {
		return fmt.Errorf("reporting status of MemberCluster %s: %w", r.Cluster, err)
	}
	return nil
}
