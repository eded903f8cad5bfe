package fleetjob

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/musterhq/muster/api/podsecurity"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/api/workloadspread"
	"github.com/musterhq/muster/hub/shards"
	"github.com/musterhq/muster/internal/patch"
	"github.com/musterhq/muster/placement/clusters"
)

// +kubebuilder:rbac:groups=muster.dev,resources=workloadspreads,verbs=get;list;watch

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

// spreadResult is what placeBySpread leaves in force.
type spreadResult struct {
	// works and shards are the shards now in force, by key and in key order.
	works  map[string]*musterv1.Work
	shards []shardState
	// scheduled is the FleetJob's Scheduled condition; requeue says when to look again.
	scheduled metav1.Condition
	requeue   time.Duration
	// evicted are the status entries of the shards failover took off their clusters,
	// events the events that say so.
	evicted []musterv1.ClusterJobStatus
	events  []event
}

// placeBySpread brings the FleetJob's shards in line with its WorkloadSpread: it creates,
// resizes and removes shards as the spread decides. It follows the spread's status and
// never writes it: the WorkloadSpread controller reports the shards placed here.
func (r *Reconciler) placeBySpread(ctx context.Context, snap *snapshot) (spreadResult, error) {
	fj, ws, works, current := snap.fj, snap.spread, snap.works, snap.shards
	leaving, err := r.spreadFailover(ctx, snap)
	if err != nil {
		return spreadResult{}, err
	}
	d := decideSpread(fj, ws, leaving.subsets, current, r.unschedulableWindow(), r.Clock.Now())
	changed, fresh, err := encodeChanges(fj, ws, d.shards, current)
	if err != nil {
		return spreadResult{}, err
	}
	if len(changed) > 0 {
		if err := r.annotatePodSecurity(ctx, fj, slices.Collect(maps.Values(changed))...); err != nil {
			return spreadResult{}, err
		}
	}
	// New shards whose names another object's Work holds stop the whole change.
	if taken, err := r.nameTaken(ctx, fj, fresh); err != nil || taken != nil {
		if err != nil {
			return spreadResult{}, err
		}
		return spreadResult{works: works, shards: current, scheduled: *taken}, nil
	}
	res, err := r.writeShards(ctx, d, works, current, changed)
	if err != nil {
		return res, err
	}
	r.announceSpreadChange(fj, ws, current, d.shards)
	res.scheduled = spreadScheduled(fj, ws, res.shards, len(d.shards) > 0)
	res.evicted, res.events = leaving.evicted, leaving.events
	res.requeue = patch.Soonest(res.requeue, leaving.requeue)
	return res, nil
}

// encodeChanges encodes the Works of the shards that changed: new shards, which get the
// subset's pod template here, and shards whose replicas changed. It returns them by key,
// and the new ones apart. Most passes (a shard's status report) change nothing and
// encode nothing.
func encodeChanges(fj *musterv1.FleetJob, ws *musterv1.WorkloadSpread, want []shard, current []shardState) (map[string]*musterv1.Work, []*musterv1.Work, error) {
	before := shardsByKey(current)
	changed := map[string]*musterv1.Work{}
	var fresh []*musterv1.Work
	for i, s := range want {
		old, exists := before[s.key()]
		if exists && ptr.Deref(old.parallelism, 0) == ptr.Deref(s.parallelism, 0) {
			continue
		}
		if !exists {
			tmpl, err := subsetTemplate(fj, ws, s.subset)
			if err != nil {
				return nil, nil, err
			}
			want[i].template = tmpl
		}
		w, err := newWork(fj, want[i])
		if err != nil {
			return nil, nil, err
		}
		changed[s.key()] = w
		if !exists {
			fresh = append(fresh, w)
		}
	}
	return changed, fresh, nil
}

func shardsByKey(states []shardState) map[string]shardState {
	out := make(map[string]shardState, len(states))
	for _, s := range states {
		out[s.key()] = s
	}
	return out
}

// writeShards removes the shards the decision drops, first so the member frees their
// pods' room, then creates or resizes the changed ones. It returns the shards now in
// force; a resized shard keeps what its agent reported, a new one has no report yet.
func (r *Reconciler) writeShards(ctx context.Context, d spreadDecision, works map[string]*musterv1.Work, current []shardState, changed map[string]*musterv1.Work) (spreadResult, error) {
	res := spreadResult{works: map[string]*musterv1.Work{}}
	var errs []error
	for _, k := range d.remove {
		if err := r.Client.Delete(ctx, works[k]); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("removing the shard %s: %w", k, err))
		}
	}
	before := shardsByKey(current)
	for _, s := range d.shards {
		k := s.key()
		w, wait, err := r.writeShard(ctx, s, works[k], changed[k])
		switch {
		case err != nil:
			errs = append(errs, err)
			continue
		case wait:
			res.requeue = patch.Soonest(res.requeue, terminatingRetry)
			continue
		}
		res.works[k] = w
		st := before[k]
		st.shard = s
		res.shards = append(res.shards, st)
	}
	slices.SortFunc(res.shards, func(a, b shardState) int { return cmp.Compare(a.key(), b.key()) })
	return res, errors.Join(errs...)
}

// writeShard brings one shard's Work (w, nil when there is none) to want, nil when the
// shard did not change, and returns the Work in force. wait says the same shard, removed
// a moment ago, still waits for its agent, so it cannot be made yet.
func (r *Reconciler) writeShard(ctx context.Context, s shard, w, want *musterv1.Work) (*musterv1.Work, bool, error) {
	switch {
	case want == nil:
		return w, false, nil
	case w != nil && w.DeletionTimestamp == nil:
		h := patch.NewHelper(r.Client, w)
		w.Spec = want.Spec
		shards.SetPodSecurity(w, want.Annotations[podsecurity.WorkAnnotation])
		if err := h.Patch(ctx, w); err != nil {
			return nil, false, fmt.Errorf("resizing the shard for %s: %w", s.describe(), err)
		}
		return w, false, nil
	case w != nil:
		// Still going: its agent removes its Job first. Create would not always say so,
		// as a Work an older hub named has another name than want.
		return nil, true, nil
	}
	err := r.Client.Create(ctx, want)
	switch {
	case apierrors.IsAlreadyExists(err):
		return nil, true, nil
	case err != nil:
		return nil, false, fmt.Errorf("creating the shard for %s: %w", s.describe(), err)
	}
	return want, false, nil
}

// announceSpreadChange records an event when the shards' replicas changed.
func (r *Reconciler) announceSpreadChange(fj *musterv1.FleetJob, ws *musterv1.WorkloadSpread, current []shardState, want []shard) {
	change := spreadChanges(current, want)
	if change == "" {
		return
	}
	reason := musterv1.FleetJobReasonSpreadChanged
	if len(current) == 0 {
		reason = musterv1.FleetJobReasonPlacedBySpread
	}
	r.Recorder.Eventf(fj, ws, corev1.EventTypeNormal, reason, "Spread", "WorkloadSpread %s: %s", ws.Name, change)
}

// spreadScheduled is the FleetJob's Scheduled condition once the spread's shards are
// written: placed are the shards in force, in key order; placedAny is false when the
// spread wants no shard at all.
func spreadScheduled(fj *musterv1.FleetJob, ws *musterv1.WorkloadSpread, placed []shardState, placedAny bool) metav1.Condition {
	if !placedAny && ptr.Deref(fj.Spec.Template.Spec.Parallelism, 1) > 0 {
		return metav1.Condition{
			Type: musterv1.FleetJobScheduled, Status: metav1.ConditionFalse, Reason: musterv1.ReasonNoEligibleClusters, ObservedGeneration: fj.Generation,
			Message: fmt.Sprintf("WorkloadSpread %s: no subset has a member cluster that can take the job", ws.Name),
		}
	}
	described := make([]string, len(placed))
	for i, s := range placed {
		described[i] = s.describe()
	}
	return metav1.Condition{
		Type: musterv1.FleetJobScheduled, Status: metav1.ConditionTrue, Reason: musterv1.FleetJobReasonPlacedBySpread, ObservedGeneration: fj.Generation,
		Message: spreadPlacedMessage(ws.Name, described),
	}
}

// subsetTemplate is the pod template of a new shard of the named subset.
func subsetTemplate(fj *musterv1.FleetJob, ws *musterv1.WorkloadSpread, subset string) (*corev1.PodTemplateSpec, error) {
	for i := range ws.Spec.Subsets {
		if ws.Spec.Subsets[i].Name == subset {
			return workloadspread.Inject(&fj.Spec.Template.Spec.Template, &ws.Spec.Subsets[i])
		}
	}
	return nil, fmt.Errorf("WorkloadSpread %s has no subset %s", ws.Name, subset)
}

// spreadSubsets resolves each subset: the clusters both it and the FleetJob's placement
// select (those that take new replicas, and those where replicas may stay), and how many
// of each cluster's nodes fit its pods.
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
		placement := &musterv1.Placement{ClusterAffinity: spec.ClusterAffinity, Tolerations: fj.Spec.Placement.Tolerations}
		selected, _ := clusters.Eligible(placement, members.Items)
		sub := spreadSubset{spec: spec, fit: map[string]int{}}
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
		// needs neither its template nor the inventory walk, which every Work status
		// report would repeat.
		if r.Inventory != nil && len(sub.clusters) > 1 {
			tmpl, err := workloadspread.Inject(&fj.Spec.Template.Spec.Template, spec)
			if err != nil {
				return nil, err
			}
			sub.fit = r.Inventory.EligibleCountByCluster(&tmpl.Spec)
		}
		out = append(out, sub)
	}
	return out, nil
}

// readShards decodes the shards of works that are not being removed, in key order.
func readShards(works map[string]*musterv1.Work) ([]shardState, error) {
	var out []shardState
	for _, k := range slices.Sorted(maps.Keys(works)) {
		w := works[k]
		if w.DeletionTimestamp != nil {
			continue
		}
		s, st, err := readWork(w)
		if err != nil {
			return nil, err
		}
		applied, failure := shards.ApplyState(w)
		out = append(out, shardState{shard: s, status: st, applied: applied, applyError: failure, workUID: w.UID})
	}
	return out, nil
}
