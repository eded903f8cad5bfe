package health

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/api/versionskew"
	"github.com/musterhq/muster/internal/patch"
)

// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch
// +kubebuilder:rbac:groups=muster.dev,resources=memberclusters,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=muster.dev,resources=memberclusters/status,verbs=get;update;patch

// Reconciler keeps MemberClusters' Available condition and unreachable taint in step with
// their agents' leases.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// GracePeriod is how long a lease may go unrenewed before the cluster counts as
	// unreachable (default 40s).
	GracePeriod time.Duration
	// HubVersion is this hub's Muster version, which agents' versions are judged against
	// (api/versionskew).
	HubVersion string

	// refusals paces the writes of MemberClusters after the API server refused one as
	// invalid.
	refusals patch.Refusals
	// seen is what this process has read of each cluster's lease: ages are measured on
	// the hub's clock from it, and it starts empty with each leader.
	mu   sync.Mutex
	seen map[string]*Seen
}

// SetupWithManager registers the reconciler; every lease renewal re-evaluates its cluster.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("health").
		For(&musterv1.MemberCluster{}).
		Watches(&coordinationv1.Lease{}, handler.EnqueueRequestsFromMapFunc(clusterOfLease)).
		Complete(r)
}

func clusterOfLease(_ context.Context, o client.Object) []ctrl.Request {
	cluster, ok := strings.CutPrefix(o.GetNamespace(), musterv1.MemberNamespacePrefix)
	if !ok || o.GetName() != LeaseName {
		return nil
	}
	return []ctrl.Request{{NamespacedName: types.NamespacedName{Name: cluster}}}
}

// Reconcile evaluates one cluster's lease and records the verdict.
// A conflict means another writer (the agent, the other hub controller) changed the
// MemberCluster first: it is read again shortly rather than reported as an error.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	result, err := r.reconcile(ctx, req)
	if patch.Requeues(err) {
		return patch.Requeue(err)
	}
	return result, err
}

func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var mc musterv1.MemberCluster
	if err := r.Client.Get(ctx, req.NamespacedName, &mc); err != nil {
		if apierrors.IsNotFound(err) {
			r.remember(req.Name, nil)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !mc.Spec.Accepted || !mc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	lease, err := r.lease(ctx, mc.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	now := r.Clock.Now()
	var recorded metav1.ConditionStatus
	if c := meta.FindStatusCondition(mc.Status.Conditions, musterv1.MemberClusterAvailable); c != nil {
		recorded = c.Status
	}
	verdict, seen := Evaluate(now, lease, r.GracePeriod, r.recall(mc.Name), recorded)
	r.remember(mc.Name, seen)
	if err := r.recordCondition(ctx, &mc, verdict); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.recordTaint(ctx, &mc, verdict.Status != metav1.ConditionTrue, now); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.recordVersionSkew(ctx, &mc); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: verdict.RecheckAfter}, nil
}

// SeenAt says when, on this hub's clock, it saw cluster's agent renew its lease at renew:
// the moment the cluster's age counts from. False when it has not judged that renewal (a
// standby replica, a renewal not evaluated yet, or one it waits to see change).
func (r *Reconciler) SeenAt(cluster string, renew time.Time) (time.Time, bool) {
	s := r.recall(cluster)
	if s == nil || s.Waiting || s.At.IsZero() || !s.RenewTime.Equal(renew) {
		return time.Time{}, false
	}
	return s.At, true
}

// QuietFor says how long, at now on this hub's clock, cluster's agent has gone without a
// renewal this process saw; false when it has seen none (a standby, a hub just started,
// a cluster not judged yet), for which only the cluster's taint counts.
func (r *Reconciler) QuietFor(cluster string, now time.Time) (time.Duration, bool) {
	s := r.recall(cluster)
	if s == nil || s.Waiting || s.At.IsZero() {
		return 0, false
	}
	return now.Sub(s.At), true
}

func (r *Reconciler) recall(cluster string) *Seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[cluster]
}

// remember keeps seen for cluster; nil forgets it.
func (r *Reconciler) remember(cluster string, seen *Seen) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if seen == nil {
		delete(r.seen, cluster)
		return
	}
	if r.seen == nil {
		r.seen = map[string]*Seen{}
	}
	r.seen[cluster] = seen
}

func (r *Reconciler) lease(ctx context.Context, cluster string) (*coordinationv1.Lease, error) {
	var lease coordinationv1.Lease
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: musterv1.MemberNamespace(cluster), Name: LeaseName}, &lease)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the lease of %s: %w", cluster, err)
	}
	return &lease, nil
}

func (r *Reconciler) recordCondition(ctx context.Context, mc *musterv1.MemberCluster, v Availability) error {
	before := meta.FindStatusCondition(mc.Status.Conditions, musterv1.MemberClusterAvailable)
	// A spec change (the unreachable taint, an administrator's) leaves the verdict as it
	// was but makes it one of an older generation: it is written again for this one, so
	// that a reader comparing observedGeneration does not take it for stale.
	transition := before == nil || before.Status != v.Status || before.Reason != v.Reason
	if !transition && before.ObservedGeneration == mc.Generation {
		return nil
	}
	h := patch.NewHelper(r.Client, mc, patch.SharedStatus(), patch.Paced(&r.refusals, r.Recorder))
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
		Type: musterv1.MemberClusterAvailable, Status: v.Status, Reason: v.Reason, Message: v.Message, ObservedGeneration: mc.Generation,
	})
	if err := h.Patch(ctx, mc); err != nil {
		return fmt.Errorf("recording Available=%s on %s: %w", v.Status, mc.Name, err)
	}
	if !transition {
		return nil
	}
	// The first verdict on a cluster that never had one is not a transition worth a warning.
	switch {
	case v.Status == metav1.ConditionTrue:
		log.FromContext(ctx).V(2).Info("the member cluster is available", "cluster", mc.Name)
		r.Recorder.Eventf(mc, nil, corev1.EventTypeNormal, musterv1.MemberClusterReasonAvailable, "Heartbeat", "%s", v.Message)
	case before != nil:
		log.FromContext(ctx).Info("the member cluster stopped heartbeating", "cluster", mc.Name, "reason", v.Reason, "message", v.Message)
		r.Recorder.Eventf(mc, nil, corev1.EventTypeWarning, musterv1.MemberClusterReasonUnreachable, "Heartbeat", "%s", v.Message)
	}
	return nil
}

// recordVersionSkew judges the agent's reported version against the hub's, and warns once
// when it turns unsupported.
func (r *Reconciler) recordVersionSkew(ctx context.Context, mc *musterv1.MemberCluster) error {
	v := versionskew.Judge(r.HubVersion, mc.Status.AgentVersion)
	status := metav1.ConditionUnknown
	switch {
	case v.Supported:
		status = metav1.ConditionTrue
	case v.Known:
		status = metav1.ConditionFalse
	}
	var was metav1.ConditionStatus
	if before := meta.FindStatusCondition(mc.Status.Conditions, musterv1.MemberClusterAgentVersionSupported); before != nil {
		if before.Status == status && before.Message == v.Message && before.ObservedGeneration == mc.Generation {
			return nil
		}
		was = before.Status
	}
	h := patch.NewHelper(r.Client, mc, patch.SharedStatus(), patch.Paced(&r.refusals, r.Recorder))
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
		Type: musterv1.MemberClusterAgentVersionSupported, Status: status, Reason: v.Reason, Message: v.Message, ObservedGeneration: mc.Generation,
	})
	if err := h.Patch(ctx, mc); err != nil {
		return fmt.Errorf("recording AgentVersionSupported=%s on %s: %w", status, mc.Name, err)
	}
	if status == metav1.ConditionFalse && was != status {
		log.FromContext(ctx).Info("the member cluster's agent runs a version the hub does not support", "cluster", mc.Name, "reason", v.Reason, "message", v.Message)
		r.Recorder.Eventf(mc, nil, corev1.EventTypeWarning, musterv1.MemberClusterReasonUnsupportedAgentVersion, "VersionSkew", "%s", v.Message)
	}
	return nil
}

func (r *Reconciler) recordTaint(ctx context.Context, mc *musterv1.MemberCluster, unreachable bool, now time.Time) error {
	taints, changed := withUnreachableTaint(mc.Spec.Taints, unreachable, now)
	if !changed {
		return nil
	}
	h := patch.NewHelper(r.Client, mc)
	mc.Spec.Taints = taints
	if err := h.Patch(ctx, mc); err != nil {
		return fmt.Errorf("updating the unreachable taint of %s: %w", mc.Name, err)
	}
	return nil
}
