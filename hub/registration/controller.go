package registration

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/musterhq/muster/api/identity"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/patch"
)

// +kubebuilder:rbac:groups=muster.dev,resources=memberclusters,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=muster.dev,resources=memberclusters/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=muster.dev,resources=works,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings;clusterroles;clusterrolebindings,verbs=get;list;watch;create;update;patch;delete;bind;escalate
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// rbacObject is any of the RBAC kinds the reconciler manages.
type rbacObject interface {
	client.Object
}

// Reconciler gives accepted clusters their namespace and RBAC and takes the RBAC away
// from clusters that are not (or no longer) accepted.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// AutoAccept accepts every cluster that registers: convenient for test fleets, not for
	// production, where `musterctl accept` is the gate.
	AutoAccept bool
	// MaxNodesPerMember is the hub's --max-nodes-per-member: a member that reports more
	// nodes gets InventoryComplete=False. Zero leaves the condition alone.
	MaxNodesPerMember int

	// refusals paces the status writes of MemberClusters after the API server refused
	// one as invalid.
	refusals patch.Refusals
}

// SetupWithManager registers the reconciler.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("registration").
		For(&musterv1.MemberCluster{}).
		Owns(&rbacv1.ClusterRoleBinding{}).
		Complete(r)
}

// Reconcile drives one MemberCluster's admission.
// A conflict means another writer (the agent, the other hub controller) changed the
// MemberCluster first: it is read again shortly rather than reported as an error.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return patch.Requeue(r.reconcile(ctx, req))
}

func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request) error {
	var mc musterv1.MemberCluster
	err := r.Client.Get(ctx, req.NamespacedName, &mc)
	if apierrors.IsNotFound(err) {
		return r.releaseWorks(ctx, req.Name)
	}
	if err != nil {
		return err
	}
	if !mc.DeletionTimestamp.IsZero() {
		// Owner references let the garbage collector remove namespace and RBAC.
		return r.releaseWorks(ctx, mc.Name)
	}
	if r.AutoAccept && !mc.Spec.Accepted {
		h := patch.NewHelper(r.Client, &mc)
		identity.AcceptCluster(&mc)
		if err := h.Patch(ctx, &mc); err != nil {
			return fmt.Errorf("auto-accepting %s: %w", mc.Name, err)
		}
	}
	for _, want := range bootstrapReader(&mc) {
		if err := r.apply(ctx, want); err != nil {
			return err
		}
	}
	if mc.Spec.Accepted {
		return r.admit(ctx, &mc)
	}
	return r.revoke(ctx, &mc)
}

// admit creates or updates the cluster's namespace and RBAC, binding it to the current
// join's group (or to nothing while there is none), then records acceptance.
func (r *Reconciler) admit(ctx context.Context, mc *musterv1.MemberCluster) error {
	ns, roles, binds := desiredRBAC(mc)
	if err := r.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", ns.Name, err)
	}
	for _, want := range append(roles, binds...) {
		if err := r.apply(ctx, want); err != nil {
			return err
		}
	}
	if len(binds) == 0 {
		if _, err := r.deleteBindings(ctx, mc.Name); err != nil {
			return err
		}
		log.FromContext(ctx).V(2).Info("accepted cluster has no current join; its agent gets no access until it joins", "cluster", mc.Name)
	}
	if err := r.setAccepted(ctx, mc, metav1.ConditionTrue, musterv1.MemberClusterReasonAccepted, "the hub administrator accepted the cluster"); err != nil {
		return err
	}
	return r.setInventory(ctx, mc)
}

// setInventory records whether the hub keeps every node the member reports, and
// announces a member that reports more once.
func (r *Reconciler) setInventory(ctx context.Context, mc *musterv1.MemberCluster) error {
	want := inventoryCondition(mc, r.MaxNodesPerMember)
	if want == nil {
		return nil
	}
	// A copy: the condition in the list changes with the write below.
	before := meta.FindStatusCondition(mc.Status.Conditions, want.Type).DeepCopy()
	if before != nil && before.Status == want.Status && before.Message == want.Message {
		return nil
	}
	h := patch.NewHelper(r.Client, mc, patch.SharedStatus(), patch.Paced(&r.refusals, r.Recorder))
	meta.SetStatusCondition(&mc.Status.Conditions, *want)
	if err := h.Patch(ctx, mc); err != nil {
		return fmt.Errorf("recording InventoryComplete=%s on %s: %w", want.Status, mc.Name, err)
	}
	if want.Status == metav1.ConditionFalse && (before == nil || before.Status != metav1.ConditionFalse) {
		log.FromContext(ctx).Info("a member reports more nodes than the hub keeps", "cluster", mc.Name, "nodes", mc.Status.Nodes.Total, "limit", r.MaxNodesPerMember)
		r.Recorder.Eventf(mc, nil, corev1.EventTypeWarning, want.Reason, "Inventory", "%s", want.Message)
	}
	return nil
}

// inventoryCondition is the InventoryComplete condition of mc under a limit of max nodes
// a member; nil before its agent reports any, or without a limit.
func inventoryCondition(mc *musterv1.MemberCluster, max int) *metav1.Condition {
	if max <= 0 || mc.Status.Nodes == nil {
		return nil
	}
	c := &metav1.Condition{
		Type: musterv1.MemberClusterInventoryComplete, Status: metav1.ConditionTrue, Reason: musterv1.MemberClusterReasonInventoryWithinLimit,
		Message: fmt.Sprintf("the hub keeps every node the member reports (at most %d)", max), ObservedGeneration: mc.Generation,
	}
	if n := int(mc.Status.Nodes.Total); n > max {
		c.Status, c.Reason = metav1.ConditionFalse, musterv1.MemberClusterReasonInventoryLimitReached
		c.Message = fmt.Sprintf("the member reports %d nodes, more than the %d the hub keeps for one member (--max-nodes-per-member): placement sees only those its NodeSlices hold", n, max)
	}
	return c
}

// releaseWorks removes the agent's finalizer from the Works of a cluster that left the
// fleet: its agent will never clean them up, and they would hold its namespace forever.
func (r *Reconciler) releaseWorks(ctx context.Context, cluster string) error {
	var works musterv1.WorkList
	if err := r.Client.List(ctx, &works, client.InNamespace(musterv1.MemberNamespace(cluster))); err != nil {
		return fmt.Errorf("listing the Works of %s: %w", cluster, err)
	}
	for i := range works.Items {
		w := &works.Items[i]
		h := patch.NewHelper(r.Client, w)
		if controllerutil.RemoveFinalizer(w, musterv1.WorkCleanupFinalizer) {
			if err := h.Patch(ctx, w); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("releasing Work %s/%s: %w", w.Namespace, w.Name, err)
			}
		}
	}
	return nil
}

// apply creates want or updates an existing object's rules, subjects and labels to it.
func (r *Reconciler) apply(ctx context.Context, want rbacObject) error {
	got := want.DeepCopyObject().(rbacObject)
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, got, func() error {
		got.SetLabels(want.GetLabels())
		got.SetOwnerReferences(want.GetOwnerReferences())
		switch g := got.(type) {
		case *rbacv1.Role:
			g.Rules = want.(*rbacv1.Role).Rules
		case *rbacv1.ClusterRole:
			g.Rules = want.(*rbacv1.ClusterRole).Rules
		case *rbacv1.RoleBinding:
			g.Subjects = want.(*rbacv1.RoleBinding).Subjects
			g.RoleRef = want.(*rbacv1.RoleBinding).RoleRef
		case *rbacv1.ClusterRoleBinding:
			g.Subjects = want.(*rbacv1.ClusterRoleBinding).Subjects
			g.RoleRef = want.(*rbacv1.ClusterRoleBinding).RoleRef
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("applying %T %s: %w", want, want.GetName(), err)
	}
	return nil
}

// revoke deletes the bindings of a cluster that is not accepted and forgets its join:
// its certificates then authenticate but are allowed nothing, and stay so if the cluster
// is accepted again (its agent then joins again).
func (r *Reconciler) revoke(ctx context.Context, mc *musterv1.MemberCluster) error {
	revoked, err := r.deleteBindings(ctx, mc.Name)
	if err != nil {
		return err
	}
	if _, ok := mc.Annotations[identity.AgentJoinAnnotation]; ok {
		h := patch.NewHelper(r.Client, mc)
		identity.DenyCluster(mc)
		if err := h.Patch(ctx, mc); err != nil {
			return fmt.Errorf("forgetting the join of denied cluster %s: %w", mc.Name, err)
		}
		revoked = true
	}
	if revoked {
		r.Recorder.Eventf(mc, nil, corev1.EventTypeWarning, musterv1.MemberClusterReasonAccessRevoked, "Revoke", "revoked the certificates of cluster %s's agent: it joins again to be readmitted", mc.Name)
		log.FromContext(ctx).Info("revoked cluster access", "cluster", mc.Name)
	}
	return r.setAccepted(ctx, mc, metav1.ConditionFalse, musterv1.MemberClusterReasonNotAccepted, "waiting for `musterctl accept "+mc.Name+"`")
}

// deleteBindings deletes the cluster's agent bindings and says whether any existed.
func (r *Reconciler) deleteBindings(ctx context.Context, cluster string) (bool, error) {
	deleted := false
	for _, b := range bindings(cluster) {
		err := r.Client.Delete(ctx, b)
		if err == nil {
			deleted = true
		} else if !apierrors.IsNotFound(err) {
			return deleted, fmt.Errorf("revoking %T %s: %w", b, b.GetName(), err)
		}
	}
	return deleted, nil
}

func (r *Reconciler) setAccepted(ctx context.Context, mc *musterv1.MemberCluster, status metav1.ConditionStatus, reason, message string) error {
	before := meta.FindStatusCondition(mc.Status.Conditions, musterv1.MemberClusterAccepted)
	if before != nil && before.Status == status && before.Reason == reason {
		return nil
	}
	// Other writers own other conditions; the lock makes a stale list a conflict (and a
	// retry) instead of a lost update.
	h := patch.NewHelper(r.Client, mc, patch.SharedStatus(), patch.Paced(&r.refusals, r.Recorder))
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
		Type: musterv1.MemberClusterAccepted, Status: status, Reason: reason, Message: message, ObservedGeneration: mc.Generation,
	})
	if status != metav1.ConditionTrue && meta.IsStatusConditionTrue(mc.Status.Conditions, musterv1.MemberClusterJoined) {
		// The agent, which reports Joined, can no longer write: its certificate is revoked.
		meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
			Type: musterv1.MemberClusterJoined, Status: metav1.ConditionFalse, Reason: musterv1.MemberClusterReasonAccessRevoked,
			Message: "the cluster was denied: its agent's certificates no longer work, and it joins again once the cluster is accepted", ObservedGeneration: mc.Generation,
		})
	}
	if err := h.Patch(ctx, mc); err != nil {
		return fmt.Errorf("recording Accepted=%s on %s: %w", status, mc.Name, err)
	}
	eventType := corev1.EventTypeNormal
	if status != metav1.ConditionTrue {
		eventType = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(mc, nil, eventType, reason, "Admit", "%s", message)
	return nil
}
