package fleetjob

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/api/workloadspread"
	"github.com/musterhq/muster/placement/clusters"
)

// +kubebuilder:rbac:groups=muster.dev,resources=workloadspreads,verbs=get;list;watch
// +kubebuilder:rbac:groups=muster.dev,resources=workloadspreads/status,verbs=get;update;patch

// terminatingRetry paces the wait for a removed shard's Work to go before a shard of the
// same name is made again.
const terminatingRetry = 2 * time.Second

func targetOfSpread(_ context.Context, o client.Object) []reconcile.Request {
	ws, ok := o.(*musterv1.WorkloadSpread)
	if !ok || ws.Spec.TargetReference.Kind != "FleetJob" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ws.Namespace, Name: ws.Spec.TargetReference.Name}}}
}

// spreadOf returns the WorkloadSpread that places fj, or nil. A spread places a FleetJob
// that has no shard yet or whose shards it placed; shards placed without a spread stay as
// they are, as OpenKruise's spread only shapes pods made after it. A finished FleetJob
// is left alone.
func (r *Reconciler) spreadOf(ctx context.Context, fj *musterv1.FleetJob, works map[string]*musterv1.Work) (*musterv1.WorkloadSpread, error) {
	if finishedFleet(&fj.Status) {
		return nil, nil
	}
	for _, w := range works {
		if w.Labels[musterv1.SubsetLabel] == "" {
			return nil, nil
		}
	}
	var reader client.Reader = r.Client
	if len(works) == 0 && r.APIReader != nil && !meta.IsStatusConditionTrue(fj.Status.Conditions, musterv1.FleetJobScheduled) {
		reader = r.APIReader
	}
	var list musterv1.WorkloadSpreadList
	if err := reader.List(ctx, &list, client.InNamespace(fj.Namespace)); err != nil {
		return nil, fmt.Errorf("listing WorkloadSpreads: %w", err)
	}
	for i := range list.Items {
		ws := &list.Items[i]
		ref := ws.Spec.TargetReference
		if ws.DeletionTimestamp == nil && ref.Kind == "FleetJob" && ref.APIVersion == musterv1.GroupVersion.String() && ref.Name == fj.Name {
			return ws, nil
		}
	}
	return nil, nil
}

// placeBySpread brings fj's shards in line with its WorkloadSpread: it creates, resizes
// and removes shards as the spread decides, reports the subsets on the spread, and
// returns the shards now in force, the FleetJob's Scheduled condition, and when to look
// again.
func (r *Reconciler) placeBySpread(ctx context.Context, fj *musterv1.FleetJob, ws *musterv1.WorkloadSpread, works map[string]*musterv1.Work) (map[string]*musterv1.Work, metav1.Condition, time.Duration, error) {
	var scheduled metav1.Condition
	current, err := readShards(works)
	if err != nil {
		return nil, scheduled, 0, err
	}
	subs, err := r.spreadSubsets(ctx, fj, ws)
	if err != nil {
		return nil, scheduled, 0, err
	}
	now := r.Clock.Now()
	d := decideSpread(fj, ws, subs, current, now)

	// 1. Write the shards: removed ones go first, so the member frees their pods' room.
	// New shards whose names another object's Work holds stop the whole change.
	var fresh []*musterv1.Work
	for _, s := range d.shards {
		if _, ok := works[s.key()]; !ok {
			w, err := newWork(fj, s)
			if err != nil {
				return nil, scheduled, 0, err
			}
			fresh = append(fresh, w)
		}
	}
	if taken, err := r.nameTaken(ctx, fj, fresh); err != nil || taken != nil {
		if err != nil {
			return nil, scheduled, 0, err
		}
		return works, *taken, 0, nil
	}
	live := map[string]*musterv1.Work{}
	for k, w := range works {
		if w.DeletionTimestamp == nil && !slices.Contains(d.remove, k) {
			live[k] = w
		}
	}
	var errs []error
	for _, k := range d.remove {
		if err := r.Client.Delete(ctx, works[k]); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("removing the shard %s: %w", k, err))
		}
	}
	requeue := d.requeue
	for _, s := range d.shards {
		want, err := newWork(fj, s)
		if err != nil {
			return nil, scheduled, 0, err
		}
		w, exists := live[s.key()]
		switch {
		case exists && equality.Semantic.DeepEqual(w.Spec, want.Spec):
		case exists:
			w.Spec = want.Spec
			if err := r.Client.Update(ctx, w); err != nil {
				errs = append(errs, fmt.Errorf("resizing the shard for %s: %w", s.describe(), err))
			}
		default:
			err := r.Client.Create(ctx, want)
			switch {
			case err == nil:
				live[s.key()] = want
			case apierrors.IsAlreadyExists(err):
				// The same shard, removed a moment ago, still waits for its agent.
				requeue = soonest(requeue, terminatingRetry)
			default:
				errs = append(errs, fmt.Errorf("creating the shard for %s: %w", s.describe(), err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, scheduled, 0, err
	}
	if change := spreadChanges(current, d.shards); change != "" {
		reason := ReasonSpreadChanged
		if len(current) == 0 {
			reason = ReasonPlacedBySpread
		}
		r.Recorder.Eventf(fj, ws, corev1.EventTypeNormal, reason, "Spread", "WorkloadSpread %s: %s", ws.Name, change)
	}

	// 2. Report the subsets.
	if err := r.updateSpreadStatus(ctx, ws, d.status); err != nil {
		return nil, scheduled, 0, err
	}

	scheduled = metav1.Condition{Type: musterv1.FleetJobScheduled, Status: metav1.ConditionTrue, Reason: ReasonPlacedBySpread, ObservedGeneration: fj.Generation}
	var placed []string
	for _, s := range d.shards {
		placed = append(placed, s.key())
	}
	scheduled.Message = fmt.Sprintf("WorkloadSpread %s: shards %v", ws.Name, placed)
	if len(d.shards) == 0 && ptr.Deref(fj.Spec.Template.Spec.Parallelism, 1) > 0 {
		scheduled.Status, scheduled.Reason = metav1.ConditionFalse, ReasonNoEligibleClusters
		scheduled.Message = fmt.Sprintf("WorkloadSpread %s: no subset has a member cluster that can take the job", ws.Name)
	}
	return live, scheduled, requeue, nil
}

// spreadSubsets resolves each subset: the clusters both it and the FleetJob's placement
// select (those that take new replicas, and those where replicas may stay), its pod
// template, and how many of each cluster's nodes fit that template.
func (r *Reconciler) spreadSubsets(ctx context.Context, fj *musterv1.FleetJob, ws *musterv1.WorkloadSpread) ([]spreadSubset, error) {
	var members musterv1.MemberClusterList
	if err := r.Client.List(ctx, &members); err != nil {
		return nil, fmt.Errorf("listing member clusters: %w", err)
	}
	allowed, _ := clusters.Eligible(&fj.Spec.Placement.Placement, members.Items)
	allowedToStay := clusters.Holding(&fj.Spec.Placement.Placement, members.Items)
	var out []spreadSubset
	for i := range ws.Spec.Subsets {
		spec := &ws.Spec.Subsets[i]
		tmpl, err := workloadspread.Inject(&fj.Spec.Template.Spec.Template, spec)
		if err != nil {
			return nil, err
		}
		placement := &musterv1.Placement{ClusterAffinity: spec.ClusterAffinity, Tolerations: fj.Spec.Placement.Tolerations}
		selected, _ := clusters.Eligible(placement, members.Items)
		sub := spreadSubset{spec: spec, template: tmpl, fit: map[string]int{}}
		for _, c := range selected {
			if slices.Contains(allowed, c) {
				sub.clusters = append(sub.clusters, c)
			}
		}
		for _, c := range clusters.Holding(placement, members.Items) {
			if slices.Contains(allowedToStay, c) {
				sub.holding = append(sub.holding, c)
			}
		}
		// Fit only weighs a subset's clusters against each other: a subset on one cluster
		// does not need the inventory walk, which every Work status report would repeat.
		if r.Inventory != nil && len(sub.clusters) > 1 {
			for c, nodes := range r.Inventory.EligibleNodesByCluster(&tmpl.Spec) {
				sub.fit[c] = len(nodes)
			}
		}
		out = append(out, sub)
	}
	return out, nil
}

// updateSpreadStatus stores the subsets' status and records each Schedulable change.
func (r *Reconciler) updateSpreadStatus(ctx context.Context, ws *musterv1.WorkloadSpread, status musterv1.WorkloadSpreadStatus) error {
	if equality.Semantic.DeepEqual(ws.Status, status) {
		return nil
	}
	before := ws.Status.DeepCopy()
	ws.Status = status
	if err := r.Client.Status().Update(ctx, ws); err != nil {
		return fmt.Errorf("updating WorkloadSpread %s status: %w", ws.Name, err)
	}
	for _, st := range status.Subsets {
		now := meta.FindStatusCondition(st.Conditions, musterv1.SubsetSchedulable)
		var was *metav1.Condition
		if prev := subsetStatus(before, st.Name); prev != nil {
			was = meta.FindStatusCondition(prev.Conditions, musterv1.SubsetSchedulable)
		}
		switch {
		case now == nil || (was != nil && was.Status == now.Status):
		case now.Status == metav1.ConditionFalse:
			r.Recorder.Eventf(ws, nil, corev1.EventTypeWarning, now.Reason, "Reschedule", "subset %s: %s", st.Name, now.Message)
		case was != nil:
			r.Recorder.Eventf(ws, nil, corev1.EventTypeNormal, now.Reason, "Reschedule", "subset %s is tried again", st.Name)
		}
	}
	return nil
}

// readShards decodes the shards of works that are not being removed, in key order.
func readShards(works map[string]*musterv1.Work) ([]shardState, error) {
	var out []shardState
	for _, k := range sortedKeys(works) {
		w := works[k]
		if w.DeletionTimestamp != nil {
			continue
		}
		s, st, err := readWork(w)
		if err != nil {
			return nil, err
		}
		out = append(out, shardState{shard: s, status: st})
	}
	return out, nil
}
