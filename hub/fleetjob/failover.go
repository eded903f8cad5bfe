package fleetjob

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	hubmetrics "github.com/musterhq/muster/hub/metrics"
	"github.com/musterhq/muster/internal/patch"
	"github.com/musterhq/muster/placement/clusters"
)

// maxEvicted is how many evicted shards a FleetJob's status keeps, the latest: enough to
// show where a job moved from, never a list that grows with each move.
const maxEvicted = 8

// heldRecheck is how soon an eviction held by the disruption gate is looked at again.
const heldRecheck = 30 * time.Second

// eviction is a shard due to leave its cluster, and why: a NoExecute taint, or its
// agent's fence.
type eviction struct {
	state shardState
	why   clusters.Eviction
	// fenced is the message with which the shard's agent ended its Job, cut off from
	// the hub past the shard's fence (see fencedBy).
	fenced string
	// membership says how the shard's cluster left the fleet (leftFleet).
	membership string
}

// describe says why the shard leaves, for its status entry and events.
func (e eviction) describe() string {
	if e.membership != "" {
		return e.membership
	}
	if e.fenced != "" {
		return "its agent stopped it, cut off from the hub: " + e.fenced
	}
	return e.why.Describe()
}

// fencedBy returns the message with which a shard's agent ended its Job for the hub's
// fence; empty when it did not. Only Failed counts: the agent writes it once the Job's
// pods are gone, whereas FailureTarget comes while they may still be terminating.
func fencedBy(s shardState) string {
	if s.status == nil {
		return ""
	}
	for _, c := range s.status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue && c.Reason == musterv1.JobReasonFenced {
			return cmp.Or(c.Message, "it lost the hub for longer than the shard's fence")
		}
	}
	return ""
}

// fencing returns the fence new shards of fj carry and the eviction policy that moves
// them no sooner than the margin after their agents stop them; no fence for a job whose
// Job template replaces a pod before the old one is gone (podReplacementPolicy other
// than Failed), whose work never moves, or that is Duplicate (an evicted copy is dropped,
// not run elsewhere). A WorkloadSpread's shards get none: the spread moves replicas,
// which its own rules already let run twice.
func (r *Reconciler) fencing(fj *musterv1.FleetJob) (time.Duration, clusters.EvictionPolicy) {
	p := r.Failover.Policy()
	if ptr.Deref(fj.Spec.Template.Spec.PodReplacementPolicy, "") != batchv1.Failed || fj.Spec.Placement.Mode == musterv1.PlacementDuplicate {
		return 0, p
	}
	after, fenced, ok := r.Failover.Fence(fj.Spec.Placement.Tolerations, podGrace(&fj.Spec.Template.Spec.Template.Spec))
	if !ok {
		return 0, p
	}
	return after, fenced
}

// podGrace is how long the pods of spec may take to stop: their termination grace period,
// 30 s when the spec sets none, as the API server defaults it.
func podGrace(spec *corev1.PodSpec) time.Duration {
	return time.Duration(ptr.Deref(spec.TerminationGracePeriodSeconds, corev1.DefaultTerminationGracePeriodSeconds)) * time.Second
}

// dueEvictions returns the shards that must leave their clusters at now, under the
// clusters' NoExecute taints or because their agents fenced them, and when the next
// pending one falls due (zero: none). A finished shard stays, since its result is
// counted, and so does a Divided shard with nothing left to run (its Job has yet to say
// Complete). No taint counts from before p.Since, a placement without a toleration of
// the unreachable taint tolerates it for p.UnreachableTolerationSeconds, and a fenced
// shard stays the margin past its fence. members are the shards' clusters by name: a
// shard whose cluster is gone, being deleted or denied leaves at once.
func dueEvictions(fj *musterv1.FleetJob, states []shardState, members map[string]*musterv1.MemberCluster, p clusters.EvictionPolicy, now time.Time) ([]eviction, time.Time) {
	if finishedFleet(&fj.Status) {
		// A finished job's shards stay: their counts are final, and those a failure
		// stopped must not start again elsewhere.
		return nil, time.Time{}
	}
	var due []eviction
	var next time.Time
	for _, s := range states {
		mc := members[s.cluster]
		if finishedPhase(shardPhase(s)) {
			continue
		}
		if left := leftFleet(mc); left != "" {
			// The admin took the cluster out of the fleet: no toleration keeps work there.
			due = append(due, eviction{state: s, membership: left})
			continue
		}
		if msg := fencedBy(s); msg != "" {
			// Its pods are stopped for good: the rest runs elsewhere, taint or none.
			due = append(due, eviction{state: s, fenced: msg})
			continue
		}
		if _, left := remainderOf(&fj.Spec.Template.Spec, s); s.subset == "" && divided(fj) && !left {
			continue
		}
		// A shard's Job carries the fence it was placed with, which holds over the job's.
		e := p.ForFence(s.fence).EvictAt(fj.Spec.Placement.Tolerations, mc.Spec.Taints)
		switch {
		case e.At.IsZero():
		case e.Due(now):
			due = append(due, eviction{state: s, why: e})
		case next.IsZero() || e.At.Before(next):
			next = e.At
		}
	}
	return due, next
}

// leftFleet says how a shard's cluster left the fleet, empty while it is a member: its
// MemberCluster deleted (mc nil) or no longer accepted. Either moves the shard at once,
// as a NoExecute taint no placement tolerates.
func leftFleet(mc *musterv1.MemberCluster) string {
	switch {
	case mc == nil:
		return "its cluster was removed from the fleet (" + musterv1.RemovedClusterKey + ")"
	case mc.DeletionTimestamp != nil:
		return "its cluster is being removed from the fleet (" + musterv1.RemovedClusterKey + ")"
	case !mc.Spec.Accepted:
		return "its cluster is no longer accepted into the fleet (" + musterv1.DeniedClusterKey + ")"
	}
	return ""
}

func divided(fj *musterv1.FleetJob) bool { return fj.Spec.Placement.Mode == musterv1.PlacementDivided }

// replaced is a shard whose unfinished part an earlier round began to place, and the
// parts placed so far.
type replaced struct {
	state shardState
	parts []shardState
}

// superseded splits states into the shards in force and those whose unfinished part
// already runs elsewhere: an earlier round placed the parts (all, or those an error did
// not cut short) and then failed to record the eviction it had decided. Those count no
// longer, whatever the gate says now, once the rest of their parts is placed.
func superseded(states []shardState) (stay []shardState, gone []replaced) {
	parts := map[types.UID][]shardState{}
	for _, s := range states {
		if s.replaces != "" {
			parts[s.replaces] = append(parts[s.replaces], s)
		}
	}
	for _, s := range states {
		if p, ok := parts[s.workUID]; ok {
			gone = append(gone, replaced{state: s, parts: p})
		} else {
			stay = append(stay, s)
		}
	}
	return stay, gone
}

// withdrawn says whether fj's status already records the eviction of s, whose Work is
// then to be deleted.
func withdrawn(fj *musterv1.FleetJob, s shardState) bool {
	for _, c := range fj.Status.Clusters {
		if c.Phase == musterv1.JobEvicted && c.Eviction != nil && c.Eviction.WorkUID != "" && c.Eviction.WorkUID == s.workUID {
			return true
		}
	}
	return false
}

func finishedPhase(p musterv1.JobPhase) bool {
	return p == musterv1.JobComplete || p == musterv1.JobFailed
}

// evictedEntry is the status entry of shard s withdrawn at now: its last counts, which
// no longer add to the job's (a Divided job's succeeded pods stay counted with the parts
// that took over), and why.
func evictedEntry(s shardState, why string, now time.Time) musterv1.ClusterJobStatus {
	entry := clusterEntry(s)
	entry.Phase = musterv1.JobEvicted
	entry.Eviction = &musterv1.ShardEviction{
		Time: metav1.Time{Time: now}, Reason: musterv1.FleetJobReasonShardEvicted, Message: why, WorkUID: s.workUID,
	}
	return entry
}

// keepEvicted returns the evicted entries of prev followed by those of fresh, the latest
// maxEvicted.
func keepEvicted(prev []musterv1.ClusterJobStatus, fresh ...musterv1.ClusterJobStatus) []musterv1.ClusterJobStatus {
	var out []musterv1.ClusterJobStatus
	for _, c := range prev {
		if c.Phase == musterv1.JobEvicted {
			out = append(out, c)
		}
	}
	out = append(out, fresh...)
	return out[max(0, len(out)-maxEvicted):]
}

// failover moves shards off clusters they may no longer stay on, in two rounds so that
// no eviction is lost: a round that finds a shard due records its eviction in the status
// it writes (its counts leave the job's at once); a later round, finding the eviction
// recorded, deletes the shard's Work. Nothing is decided while most of the clusters the
// placement selects are unreachable at once (the hub then takes the outage for its own),
// nor beyond the eviction rate. It returns the shards that stay, the entries of those
// evicted now, the events that announce them, and when to look again.
func (r *Reconciler) failover(ctx context.Context, snap *snapshot) (failoverResult, error) {
	res := failoverResult{shards: snap.shards}
	if r.Failover == nil {
		return res, nil
	}
	var stay []shardState
	for _, s := range snap.shards {
		if !withdrawn(snap.fj, s) {
			stay = append(stay, s)
			continue
		}
		if err := r.withdraw(ctx, snap.works[s.key()], s); err != nil {
			return res, err
		}
	}
	now := r.Clock.Now()
	stay, gone := superseded(stay)
	res.shards = stay
	members := r.memberList()
	for _, g := range gone {
		if err := r.finishMove(ctx, snap.fj, g, members, now, &res); err != nil {
			return res, err
		}
	}
	stay = res.shards
	_, policy := r.fencing(snap.fj)
	due, next := dueEvictions(snap.fj, stay, snap.clusters, policy, now)
	if !next.IsZero() {
		res.requeue = patch.Soonest(res.requeue, next.Sub(now)+time.Second)
	}
	if len(due) == 0 {
		return res, nil
	}
	if !r.Failover.Ready() {
		res.requeue = r.Failover.RetryAfter()
		return res, nil
	}
	all, err := members(ctx)
	if err != nil {
		return res, err
	}
	if held, down, of := r.Failover.Disrupted(&snap.fj.Spec.Placement.Placement, all); held {
		res.events = append(res.events, r.holdAll(ctx, due, down, of))
		res.requeue = heldRecheck
		return res, nil
	}
	for _, e := range due {
		var planned []shard
		if divided(snap.fj) {
			// The parts are planned before a token is spent: a shard whose rest no
			// cluster can take must not hold up the evictions of others.
			rest, _ := remainderOf(&snap.fj.Spec.Template.Spec, e.state)
			var held string
			if planned, held = r.planParts(snap.fj, e.state, rest, 0, all); held != "" {
				r.holdMove(ctx, e.state, held, &res)
				continue
			}
		}
		if !r.Failover.Take() {
			res.requeue = r.Failover.RetryAfter()
			break
		}
		ev := failedOverEvent(snap.fj, e)
		if divided(snap.fj) {
			parts, err := r.writeParts(ctx, snap.fj, e.state, planned)
			if err != nil {
				return res, err
			}
			res.shards = append(res.shards, parts...)
			ev.note = movedPartNote(e, parts)
		}
		log.FromContext(ctx).Info("evicting a shard of the FleetJob", "cluster", e.state.cluster, "why", e.describe())
		res.shards = slices.DeleteFunc(res.shards, func(s shardState) bool { return s.key() == e.state.key() })
		res.evicted = append(res.evicted, evictedEntry(e.state, e.describe(), now))
		res.events = append(res.events, ev)
	}
	if len(res.evicted) > 0 {
		// The next round deletes the Works, once the status records their eviction.
		res.requeue = time.Second
	}
	return res, nil
}

// failoverResult is what failover leaves in force.
type failoverResult struct {
	// shards are those that stay; evicted the entries of those withdrawn.
	shards  []shardState
	evicted []musterv1.ClusterJobStatus
	events  []event
	requeue time.Duration
}

// holdAll reports the due evictions held by the disruption gate, with down of the
// placement's of clusters unreachable or quiet.
func (r *Reconciler) holdAll(ctx context.Context, due []eviction, down, of int) event {
	log.FromContext(ctx).V(2).Info("eviction held by the disruption gate", "clusters", clusterList(due), "unreachable", down, "selected", of)
	hubmetrics.FailoversHeld.WithLabelValues("FleetJob").Inc()
	return event{corev1.EventTypeWarning, musterv1.FleetJobReasonFailoverHeld, "Evict", fmt.Sprintf(
		"not moving the shards off %s: %d of the %d clusters the placement selects are unreachable, more than %.0f%%, so the hub may be the one cut off",
		clusterList(due), down, of, 100*r.Failover.Threshold)}
}

// withdraw deletes the Work of a shard whose eviction the status records. The agent
// deletes its Job and pods when it next reaches the hub, and whatever the shard did
// meanwhile is never counted.
func (r *Reconciler) withdraw(ctx context.Context, w *musterv1.Work, s shardState) error {
	if w == nil {
		return nil
	}
	err := r.Client.Delete(ctx, w, client.Preconditions{UID: &w.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("withdrawing the evicted shard in %s: %w", s.describe(), err)
	}
	log.FromContext(ctx).V(2).Info("withdrew an evicted shard of the FleetJob", "cluster", s.cluster)
	return nil
}

// finishMove completes the move of a shard an earlier round began to move: it places
// what the parts written so far do not cover, then evicts the shard. When no cluster can
// take that rest, the shard stays in force and its parts carry nothing this round, so
// that its succeeded pods are counted once, by it.
func (r *Reconciler) finishMove(ctx context.Context, fj *musterv1.FleetJob, g replaced, members func(context.Context) ([]musterv1.MemberCluster, error), now time.Time, res *failoverResult) error {
	if rest, left := uncovered(&fj.Spec.Template.Spec, g.state, g.parts); left {
		all, err := members(ctx)
		if err != nil {
			return err
		}
		planned, held := r.planParts(fj, g.state, rest, len(g.parts), all)
		if held != "" {
			r.holdMove(ctx, g.state, held, res)
			res.shards = append(res.shards, g.state)
			for i := range res.shards {
				if res.shards[i].replaces == g.state.workUID {
					res.shards[i].carried = 0
				}
			}
			return nil
		}
		parts, err := r.writeParts(ctx, fj, g.state, planned)
		if err != nil {
			return err
		}
		res.shards = append(res.shards, parts...)
	}
	res.evicted = append(res.evicted, evictedEntry(g.state, "its unfinished part was placed on other clusters", now))
	res.requeue = time.Second
	return nil
}

// holdMove reports an eviction held because no other cluster can take the shard's rest.
func (r *Reconciler) holdMove(ctx context.Context, s shardState, why string, res *failoverResult) {
	log.FromContext(ctx).V(2).Info("eviction held: no cluster can take the unfinished part", "cluster", s.cluster)
	res.events = append(res.events, event{corev1.EventTypeWarning, musterv1.FleetJobReasonFailoverHeld, "Evict", why})
	res.requeue = heldRecheck
}

// memberList reads the member clusters once per round, when a decision needs them.
func (r *Reconciler) memberList() func(context.Context) ([]musterv1.MemberCluster, error) {
	var list *musterv1.MemberClusterList
	return func(ctx context.Context) ([]musterv1.MemberCluster, error) {
		if list == nil {
			l := &musterv1.MemberClusterList{}
			if err := r.Client.List(ctx, l); err != nil {
				return nil, fmt.Errorf("listing member clusters: %w", err)
			}
			list = l
		}
		return list.Items, nil
	}
}

// planParts divides the rest of the shard from among the other clusters that can take it
// (placeRemainder), or says why nothing moves: no other cluster can take it.
func (r *Reconciler) planParts(fj *musterv1.FleetJob, from shardState, rest remainder, attempt int, members []musterv1.MemberCluster) ([]shard, string) {
	others := members
	if fencedBy(from) == "" {
		// A fenced shard's cluster is reachable again and its pods are gone: it may take
		// a part. Any other evicted shard's cluster is the one being left.
		others = slices.DeleteFunc(slices.Clone(members), func(mc musterv1.MemberCluster) bool { return mc.Name == from.cluster })
	}
	eligible, excluded := clusters.Eligible(&fj.Spec.Placement.Placement, others)
	fit := map[string]int{}
	if r.Inventory != nil {
		fit = r.Inventory.EligibleCountByCluster(&fj.Spec.Template.Spec.Template.Spec)
	}
	parts := placeRemainder(fj, from, rest, attempt, eligible, fit)
	if len(parts) == 0 {
		return nil, fmt.Sprintf("not moving the unfinished part of the shard in %s: no other cluster can take it; %s",
			from.describe(), clusters.DescribeExcluded(excluded))
	}
	fence, _ := r.fencing(fj)
	for i := range parts {
		parts[i].fence = fence
	}
	return parts, ""
}

// writeParts writes the Works of parts, before the eviction of the shard from is
// recorded. A Work of a part's name that already exists is one the cache does not show
// yet: the round is retried once it does, and places only what the parts it then sees
// leave uncovered (uncovered), never the same indexes twice.
func (r *Reconciler) writeParts(ctx context.Context, fj *musterv1.FleetJob, from shardState, parts []shard) ([]shardState, error) {
	works, err := r.shardWorks(ctx, fj, parts)
	if err != nil {
		return nil, err
	}
	states := make([]shardState, len(parts))
	for i, w := range works {
		if err := r.Client.Create(ctx, w); err != nil {
			return nil, fmt.Errorf("placing the unfinished part of the shard in %s on %s: %w", from.describe(), parts[i].cluster, err)
		}
		states[i] = shardState{shard: parts[i], workUID: w.UID}
	}
	log.FromContext(ctx).V(2).Info("placed the unfinished part of an evicted shard", "from", from.cluster, "clusters", partClusters(states))
	return states, nil
}

func partClusters(parts []shardState) string {
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = p.cluster
	}
	return clusters.Names(names)
}

// movedPartNote announces the eviction of a Divided job's shard: how much of it moved,
// and where to. It names counts, never the indexes, so it stays short.
func movedPartNote(e eviction, parts []shardState) string {
	what := "the unfinished part"
	if e.state.completions != nil {
		var left int32
		for _, p := range parts {
			left += ptr.Deref(p.completions, 0)
		}
		what = fmt.Sprintf("the %d unfinished of its %d completions", left, *e.state.completions)
	}
	return fmt.Sprintf("moved %s from %s to %s: %s", what, e.state.describe(), partClusters(parts), e.describe())
}

// failedOverEvent announces an eviction: a Single job's shard moves (placed again next
// round, whose Placed event names where), a Duplicate job's copy is dropped.
func failedOverEvent(fj *musterv1.FleetJob, e eviction) event {
	note := fmt.Sprintf("withdrew the shard from %s, to be placed again: %s", e.state.describe(), e.describe())
	if fj.Spec.Placement.Mode == musterv1.PlacementDuplicate {
		note = fmt.Sprintf("dropped the copy in %s from the job: %s", e.state.describe(), e.describe())
	}
	return event{corev1.EventTypeWarning, musterv1.FleetJobReasonFailedOver, "Evict", note}
}

// evictedScheduled is the Scheduled condition of a job left with no shard by its
// evictions: it is placed again, on the clusters that can take it now.
func evictedScheduled(fj *musterv1.FleetJob, evicted []musterv1.ClusterJobStatus) metav1.Condition {
	names := make([]string, len(evicted))
	for i, c := range evicted {
		names[i] = c.ClusterName
	}
	return metav1.Condition{
		Type: musterv1.FleetJobScheduled, Status: metav1.ConditionFalse, Reason: musterv1.FleetJobReasonShardEvicted, ObservedGeneration: fj.Generation,
		Message: fmt.Sprintf("the job was evicted from %s; it is placed again on the clusters that can take it", clusters.Names(names)),
	}
}

// movedFrom names the clusters a job placed again after evictions left (the latest
// evictions: earlier ones were announced with their own placements), for the event of
// its new placement; empty when the placement is not a failover.
func movedFrom(fj *musterv1.FleetJob) string {
	c := meta.FindStatusCondition(fj.Status.Conditions, musterv1.FleetJobScheduled)
	if c == nil || c.Reason != musterv1.FleetJobReasonShardEvicted {
		return ""
	}
	var names []string
	var latest time.Time
	for _, e := range fj.Status.Clusters {
		if e.Phase != musterv1.JobEvicted || e.Eviction == nil {
			continue
		}
		switch t := e.Eviction.Time.Time; {
		case t.After(latest):
			names, latest = []string{e.ClusterName}, t
		case t.Equal(latest) && !slices.Contains(names, e.ClusterName):
			names = append(names, e.ClusterName)
		}
	}
	return clusters.Names(names)
}

func clusterList(due []eviction) string {
	names := make([]string, len(due))
	for i, e := range due {
		names[i] = e.state.cluster
	}
	return clusters.Names(names)
}

// shardsOnCluster maps a MemberCluster whose NoExecute taints or membership changed to
// the FleetJobs with shards on it, so their evictions are timed from the change.
func (r *Reconciler) shardsOnCluster(ctx context.Context, mc client.Object) []reconcile.Request {
	var works musterv1.WorkList
	if err := r.Client.List(ctx, &works, client.InNamespace(musterv1.MemberNamespace(mc.GetName())), client.HasLabels{musterv1.FleetJobUIDLabel}); err != nil {
		log.FromContext(ctx).Error(err, "listing the FleetJob shards of a member cluster whose taints changed", "cluster", mc.GetName())
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(works.Items))
	for _, w := range works.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: w.Labels[musterv1.FleetJobNamespaceLabel], Name: w.Labels[musterv1.FleetJobNameLabel]}})
	}
	return reqs
}

// noExecuteChange passes the updates of a MemberCluster that change its NoExecute taints
// or its membership (accepted, being deleted), and its deletion: each may move shards.
var noExecuteChange = predicate.Funcs{
	CreateFunc:  func(ctrlevent.CreateEvent) bool { return false },
	DeleteFunc:  func(ctrlevent.DeleteEvent) bool { return true },
	GenericFunc: func(ctrlevent.GenericEvent) bool { return false },
	UpdateFunc:  func(e ctrlevent.UpdateEvent) bool { return noExecuteChanged(e) || membershipChanged(e) },
}

// membershipChanged says whether an update changed whether a MemberCluster is a member:
// accepted or denied, or its deletion begun.
func membershipChanged(e ctrlevent.UpdateEvent) bool {
	oldMC, ok1 := e.ObjectOld.(*musterv1.MemberCluster)
	newMC, ok2 := e.ObjectNew.(*musterv1.MemberCluster)
	return ok1 && ok2 && (oldMC.Spec.Accepted != newMC.Spec.Accepted || (oldMC.DeletionTimestamp == nil) != (newMC.DeletionTimestamp == nil))
}

// noExecuteChanged says whether an update changed a MemberCluster's NoExecute taints.
func noExecuteChanged(e ctrlevent.UpdateEvent) bool {
	oldMC, ok1 := e.ObjectOld.(*musterv1.MemberCluster)
	newMC, ok2 := e.ObjectNew.(*musterv1.MemberCluster)
	if !ok1 || !ok2 {
		return false
	}
	// timeAdded counts: a taint is not counted until the hub has stamped it.
	return !slices.EqualFunc(noExecute(oldMC.Spec.Taints), noExecute(newMC.Spec.Taints), func(a, b corev1.Taint) bool {
		return a.MatchTaint(&b) && a.Value == b.Value && a.TimeAdded.Equal(b.TimeAdded)
	})
}

func noExecute(taints []corev1.Taint) []corev1.Taint {
	return slices.DeleteFunc(slices.Clone(taints), func(t corev1.Taint) bool { return t.Effect != corev1.TaintEffectNoExecute })
}

// spreadLeaving is what failover decides for a FleetJob a WorkloadSpread places: the
// subsets with the clusters its shards must leave no longer holding them, so that the
// spread moves their replicas as it moves those an Adaptive strategy finds unschedulable.
type spreadLeaving struct {
	subsets []spreadSubset
	evicted []musterv1.ClusterJobStatus
	events  []event
	requeue time.Duration
}

// spreadFailover takes the clusters whose NoExecute taints the job no longer tolerates out
// of the holding clusters of the subsets with shards there, under the same gate, rate and
// default toleration as other shards. The spread then removes those shards and places
// their replicas where its rules allow; the status keeps each as an evicted entry.
func (r *Reconciler) spreadFailover(ctx context.Context, snap *snapshot) (spreadLeaving, error) {
	out := spreadLeaving{subsets: snap.subsets}
	if r.Failover == nil || spreadFrozen(snap.fj, snap.shards) {
		// Shards with fixed completions keep their places; they do not move.
		return out, nil
	}
	shardClusters, err := r.shardClusters(ctx, snap.shards)
	if err != nil {
		return out, err
	}
	now := r.Clock.Now()
	due, next := dueEvictions(snap.fj, snap.shards, shardClusters, r.Failover.Policy(), now)
	if !next.IsZero() {
		out.requeue = next.Sub(now) + time.Second
	}
	if len(due) == 0 {
		return out, nil
	}
	if !r.Failover.Ready() {
		out.requeue = r.Failover.RetryAfter()
		return out, nil
	}
	var members musterv1.MemberClusterList
	if err := r.Client.List(ctx, &members); err != nil {
		return out, fmt.Errorf("listing member clusters: %w", err)
	}
	if held, down, of := r.Failover.Disrupted(spreadPlacement(snap.subsets), members.Items); held {
		hubmetrics.FailoversHeld.WithLabelValues("FleetJob").Inc()
		out.events = append(out.events, event{corev1.EventTypeWarning, musterv1.FleetJobReasonFailoverHeld, "Evict", fmt.Sprintf(
			"not moving the replicas off %s: %d of the %d clusters the placement selects are unreachable, more than %.0f%%, so the hub may be the one cut off",
			clusterList(due), down, of, 100*r.Failover.Threshold)})
		out.requeue = heldRecheck
		return out, nil
	}
	out.subsets = slices.Clone(snap.subsets)
	for _, e := range due {
		if !r.Failover.Take() {
			out.requeue = r.Failover.RetryAfter()
			break
		}
		for i := range out.subsets {
			if out.subsets[i].spec.Name == e.state.subset {
				out.subsets[i].holding = slices.DeleteFunc(slices.Clone(out.subsets[i].holding), func(c string) bool { return c == e.state.cluster })
			}
		}
		log.FromContext(ctx).Info("evicting a spread shard of the FleetJob", "subset", e.state.subset, "cluster", e.state.cluster, "why", e.describe())
		out.evicted = append(out.evicted, evictedEntry(e.state, e.describe(), now))
		out.events = append(out.events, event{corev1.EventTypeWarning, musterv1.FleetJobReasonFailedOver, "Evict",
			fmt.Sprintf("moving the replicas of %s to where the spread allows: %s", e.state.describe(), e.describe())})
	}
	return out, nil
}

// spreadPlacement selects the clusters a spread's subsets place on or hold: those the
// disruption gate weighs, rather than every cluster the FleetJob's own placement allows.
func spreadPlacement(subs []spreadSubset) *musterv1.Placement {
	var names []string
	for _, sub := range subs {
		names = append(names, sub.clusters...)
		names = append(names, sub.holding...)
	}
	slices.Sort(names)
	return &musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: slices.Compact(names)}}
}
