package worksync

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mccontroller "sigs.k8s.io/multicluster-runtime/pkg/controller"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	agentmetrics "github.com/musterhq/muster/agent/metrics"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/patch"
)

// deletionPoll is how often a deleting Work checks that its member objects are gone.
const deletionPoll = time.Second

// Retries back off from 100ms to at most 5s. The usual 1000s ceiling would leave a Work's
// status unreported for minutes after a long hub outage; 5s bounds how long after the
// hub's return its status catches up.
const (
	retryBase = 100 * time.Millisecond
	retryMax  = 5 * time.Second
)

// Reconciler syncs Works from the hub to the member.
type Reconciler struct {
	Manager mcmanager.Manager
	// HubCluster is the name under which the hub is engaged.
	HubCluster multicluster.ClusterName
	// Cluster is this member's name; its Works live in muster-member-<Cluster>.
	Cluster string
	// Workers is how many Works are synced at once.
	Workers int
	// Executor is the member as the Work executor sees it (see NewExecutor): manifests are
	// applied, deleted, read and watched through it, never with the agent's own rights.
	Executor cluster.Cluster

	controller mccontroller.TypedController[mcreconcile.Request]
	watchMu    sync.Mutex
	watched    map[schema.GroupVersionKind]bool
	// refusals paces the status writes of Works after the hub refused one as invalid
	// (a status feedback past the CRD's bounds, say): every change of the member's
	// objects would otherwise send it again.
	refusals patch.Refusals
}

// SetupWithManager watches Works on the hub; member objects are watched as their kinds
// appear in Works.
func (r *Reconciler) SetupWithManager(mgr mcmanager.Manager) error {
	r.watched = map[schema.GroupVersionKind]bool{}
	// The executor's cache starts with the member's: the watches on applied kinds live there.
	if err := mgr.GetLocalManager().Add(r.Executor); err != nil {
		return fmt.Errorf("adding the work executor's cache: %w", err)
	}
	ns := musterv1.MemberNamespace(r.Cluster)
	c, err := mcbuilder.ControllerManagedBy(mgr).
		Named("work-sync").
		WithOptions(controller.TypedOptions[mcreconcile.Request]{
			MaxConcurrentReconciles: r.Workers,
			RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[mcreconcile.Request](retryBase, retryMax),
		}).
		For(&musterv1.Work{},
			mcbuilder.WithEngageWithLocalCluster(false),
			mcbuilder.WithPredicates(
				predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == ns }),
				// The agent's own status and finalizer writes need no second pass;
				// spec changes and deletion do (deletion bumps the generation too).
				predicate.GenerationChangedPredicate{},
			)).
		Build(r)
	if err != nil {
		return err
	}
	r.controller = c
	return nil
}

// Reconcile makes the member match one Work and reports back.
func (r *Reconciler) Reconcile(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
	if req.ClusterName != r.HubCluster {
		return reconcile.Result{}, nil
	}
	hubCluster, err := r.Manager.GetCluster(ctx, req.ClusterName)
	if err != nil {
		return reconcile.Result{}, err
	}
	hub := hubCluster.GetClient()
	var work musterv1.Work
	if err := hub.Get(ctx, req.NamespacedName, &work); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	member := r.Executor.GetClient()
	if !work.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, hub, member, &work)
	}
	if controllerutil.AddFinalizer(&work, Finalizer) {
		if err := hub.Update(ctx, &work); err != nil {
			return reconcile.Result{}, fmt.Errorf("adding the cleanup finalizer: %w", err)
		}
	}
	start := time.Now()
	outcomes := r.applyAll(ctx, member, &work)
	agentmetrics.WorkApplyDuration.WithLabelValues(r.Cluster).Observe(time.Since(start).Seconds())
	r.reportFailures(ctx, &work, outcomes)
	if err := r.pruneDropped(ctx, member, &work, outcomes); err != nil {
		return reconcile.Result{}, err
	}
	if err := r.writeStatus(ctx, hubCluster, &work, outcomes); err != nil {
		if _, refused := patch.Refused(err); refused {
			return patch.Requeue(err)
		}
		if apierrors.IsConflict(err) {
			// The hub changed the Work meanwhile; its update event brings it back, this
			// retry only covers a lost event.
			return reconcile.Result{RequeueAfter: time.Second}, nil
		}
		return reconcile.Result{}, err
	}
	if after, ok := nextAttempt(work.Status.Manifests, outcomes, time.Now()); ok {
		log.FromContext(ctx).V(2).Info("retrying refused manifests later", "after", after)
		return reconcile.Result{RequeueAfter: after}, nil
	}
	return reconcile.Result{}, nil
}

// applyAll applies every manifest; one failing never stops the others.
func (r *Reconciler) applyAll(ctx context.Context, member client.Client, work *musterv1.Work) []outcome {
	force := work.Spec.ApplyOption != nil && work.Spec.ApplyOption.ForceConflicts
	var outcomes []outcome
	ms := decodeManifests(work)
	dups := duplicates(ms)
	namespaces := namespaceSpecOf(work)
	for _, m := range applyOrder(ms) {
		if m.err != nil {
			outcomes = append(outcomes, outcome{ordinal: m.ordinal, err: invalidManifest{m.err}})
			continue
		}
		id := identity(m.object)
		if first, ok := dups[m.ordinal]; ok {
			log.FromContext(ctx).V(2).Info("not applying a second manifest for one object", "manifest", m.ordinal, "first", first, "object", id)
			outcomes = append(outcomes, outcome{ordinal: m.ordinal, id: id, err: duplicateManifest{ordinal: m.ordinal, first: first, id: id}})
			continue
		}
		obj, err := r.apply(ctx, member, namespaces, m.object, force)
		outcomes = append(outcomes, outcome{ordinal: m.ordinal, id: id, object: obj, err: err})
	}
	return outcomes
}

// apply server-side-applies one object, creating its namespace first if it is missing,
// and makes sure the member's events for its kind reach this controller.
func (r *Reconciler) apply(ctx context.Context, member client.Client, namespaces namespaceSpec, desired *unstructured.Unstructured, force bool) (*unstructured.Unstructured, error) {
	obj := desired.DeepCopy()
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[WorkLabel] = namespaces.work
	obj.SetLabels(labels)
	namespaced, err := member.IsObjectNamespaced(obj)
	if err != nil {
		return nil, fmt.Errorf("%s is not a kind the member serves: %w", obj.GroupVersionKind(), err)
	}
	if namespaced {
		if obj.GetNamespace() == "" {
			obj.SetNamespace(metav1.NamespaceDefault)
		}
		if err := ensureNamespace(ctx, member, obj.GetNamespace(), namespaces); err != nil {
			return nil, err
		}
	}
	opts := []client.ApplyOption{client.FieldOwner(FieldManager)}
	if force {
		opts = append(opts, client.ForceOwnership)
	}
	if err := member.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), opts...); err != nil {
		return nil, err
	}
	if err := r.watch(obj.GroupVersionKind()); err != nil {
		log.FromContext(ctx).Error(err, "watching applied kind; its status feedback will lag", "gvk", obj.GroupVersionKind())
	}
	return obj, nil
}

// watch starts, once per kind, a watch on member objects of that kind that carry the
// Work label, mapping their events back to their Work.
func (r *Reconciler) watch(gvk schema.GroupVersionKind) error {
	r.watchMu.Lock()
	defer r.watchMu.Unlock()
	if r.watched[gvk] {
		return nil
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	ns, hubName := musterv1.MemberNamespace(r.Cluster), r.HubCluster
	toWork := handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, o *unstructured.Unstructured) []mcreconcile.Request {
		name := o.GetLabels()[WorkLabel]
		if name == "" {
			return nil
		}
		return []mcreconcile.Request{{ClusterName: hubName, Request: reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}}
	})
	src := source.TypedKind[*unstructured.Unstructured, mcreconcile.Request](r.Executor.GetCache(), obj, toWork)
	if err := r.controller.Watch(src); err != nil {
		return err
	}
	r.watched[gvk] = true
	return nil
}

// pruneDropped deletes objects the Work applied before but no longer lists.
func (r *Reconciler) pruneDropped(ctx context.Context, member client.Client, work *musterv1.Work, outcomes []outcome) error {
	current := map[musterv1.ResourceIdentifier]bool{}
	for _, o := range outcomes {
		current[o.id] = true
	}
	for _, prev := range work.Status.Manifests {
		if current[prev.Resource] || prev.Resource.Kind == "" || orphans(work) {
			continue
		}
		if _, err := deleteObject(ctx, member, objectFor(prev.Resource)); err != nil {
			return fmt.Errorf("deleting %s %s/%s dropped from the Work: %w", prev.Resource.Kind, prev.Resource.Namespace, prev.Resource.Name, err)
		}
	}
	return nil
}

func orphans(work *musterv1.Work) bool {
	return work.Spec.DeleteOption != nil && work.Spec.DeleteOption.PropagationPolicy == musterv1.DeletePropagationOrphan
}

// finalize deletes the Work's member objects (unless it orphans them) and lets the Work go
// only once they are gone.
func (r *Reconciler) finalize(ctx context.Context, hub, member client.Client, work *musterv1.Work) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(work, Finalizer) {
		return reconcile.Result{}, nil
	}
	if !orphans(work) {
		remaining := 0
		for _, m := range decodeManifests(work) {
			if m.object == nil {
				continue
			}
			obj := objectFor(identity(m.object))
			if obj.GetNamespace() == "" {
				if namespaced, err := member.IsObjectNamespaced(obj); err == nil && namespaced {
					obj.SetNamespace(metav1.NamespaceDefault)
				}
			}
			deleting, err := deleteObject(ctx, member, obj)
			if err != nil {
				return reconcile.Result{}, fmt.Errorf("deleting %s %s: %w", obj.GetKind(), obj.GetName(), err)
			}
			if deleting {
				remaining++
			}
		}
		if remaining > 0 {
			return reconcile.Result{RequeueAfter: deletionPoll}, nil
		}
	}
	controllerutil.RemoveFinalizer(work, Finalizer)
	if err := hub.Update(ctx, work); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("releasing the Work: %w", err)
	}
	return reconcile.Result{}, nil
}

// deleteObject deletes a member object the Work applied, and says whether it may still be
// there (its deletion was accepted). Gone, of a kind the member no longer serves, or
// forbidden to the executor all count as done: a manifest the member refused to apply is
// refused deletion too, and waiting for it would hold the Work, and the hub object whose
// shard it is, forever. An object applied before the member's admin took the right away
// stays, for the admin to remove.
func deleteObject(ctx context.Context, member client.Client, obj *unstructured.Unstructured) (bool, error) {
	err := member.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground))
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
		return false, nil
	case apierrors.IsForbidden(err):
		log.FromContext(ctx).Info("the work executor may not delete this object; leaving it in the member", "kind", obj.GetKind(), "object", klog.KObj(obj), "message", err.Error())
		return false, nil
	}
	return false, err
}

// writeStatus records the outcomes on the Work if anything changed. A write the hub
// refused as invalid holds the Work's next ones back (see patch.Refusals).
func (r *Reconciler) writeStatus(ctx context.Context, hub cluster.Cluster, work *musterv1.Work, outcomes []outcome) error {
	prev := map[int32]*musterv1.ManifestStatus{}
	for i := range work.Status.Manifests {
		prev[work.Status.Manifests[i].Ordinal] = &work.Status.Manifests[i]
	}
	status := musterv1.WorkStatus{ObservedGeneration: work.Generation}
	sort.Slice(outcomes, func(i, j int) bool { return outcomes[i].ordinal < outcomes[j].ordinal })
	for _, o := range outcomes {
		status.Manifests = append(status.Manifests, manifestStatus(o, ruleFor(work.Spec.FeedbackRules, o.id), prev[int32(o.ordinal)], work.Generation))
	}
	status.Conditions = workConditions(work.Status.Conditions, status.Manifests, work.Generation)
	if equality.Semantic.DeepEqual(status, work.Status) {
		return nil
	}
	if err := r.refusals.Check(work); err != nil {
		return fmt.Errorf("reporting the Work's status: %w", err)
	}
	work.Status = status
	err := hub.GetClient().Status().Update(ctx, work)
	if err := r.refusals.Observe(ctx, hub.GetEventRecorder("muster-agent"), work, err); err != nil {
		return fmt.Errorf("reporting the Work's status: %w", err)
	}
	return nil
}
