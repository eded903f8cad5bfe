package fleetjob

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/musterhq/muster/api/indexset"
	"github.com/musterhq/muster/api/names"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/placement/clusters"
)

// shortfall is what the placement a FleetJob's status records asks for and neither its
// shards in force nor the succeeded pods they carried account for: the share of a Work
// whose create was refused or cut short by a restart, or of a shard whose member was
// removed with its Works. The hub places it again, so that a job is never Complete with
// part of it never run.
type shortfall struct {
	// copies is how many whole shards are missing: a Single job's one, a Duplicate job's
	// copies, a Divided job without completions once none is left.
	copies int
	// rest is the share of a Divided job with completions that is missing: completions,
	// and for an Indexed job exactly its indexes.
	rest remainder
}

// recordedDecisions is how many placements fj's status records; an older hub recorded
// none but Scheduled=True, which stands for the first.
func recordedDecisions(fj *musterv1.FleetJob) int32 {
	if p := fj.Status.Placement; p != nil {
		return p.Decisions
	}
	if meta.IsStatusConditionTrue(fj.Status.Conditions, musterv1.FleetJobScheduled) {
		return 1
	}
	return 0
}

// shortfallOf is what the shards in force (states) leave of fj's recorded placement. A
// job without a recorded placement, waiting to be placed again (Scheduled=False), or
// finished has none: its own path places it, and a finished job's counts are final.
func shortfallOf(fj *musterv1.FleetJob, states []shardState) (shortfall, bool) {
	if recordedDecisions(fj) == 0 || finishedFleet(&fj.Status) || !meta.IsStatusConditionTrue(fj.Status.Conditions, musterv1.FleetJobScheduled) {
		return shortfall{}, false
	}
	spec := &fj.Spec.Template.Spec
	switch fj.Spec.Placement.Mode {
	case musterv1.PlacementDuplicate:
		want := len(states)
		if p := fj.Status.Placement; p != nil {
			want = int(p.Copies)
		}
		return shortfall{copies: want - len(states)}, want > len(states)
	case musterv1.PlacementDivided:
		if spec.Completions == nil {
			return shortfall{copies: 1}, len(states) == 0
		}
		return dividedShortfall(spec, states)
	}
	return shortfall{copies: 1}, len(states) == 0
}

// dividedShortfall is the share of a Divided job with completions that states do not
// run or carry: completions counted, and for an Indexed job the very indexes.
func dividedShortfall(spec *batchv1.JobSpec, states []shardState) (shortfall, bool) {
	want := *spec.Completions
	var accounted int32
	var covered indexset.Set
	for _, s := range states {
		if s.fleetIndexes != "" || s.indexes != nil {
			accounted += int32(s.fleet().Len())
		} else {
			accounted += ptr.Deref(s.completions, 0)
		}
		accounted += s.carried
		covered = covered.Union(s.fleet()).Union(s.carriedSet())
	}
	rest := remainder{parallelism: spec.Parallelism}
	if ptr.Deref(spec.CompletionMode, batchv1.NonIndexedCompletion) != batchv1.IndexedCompletion {
		rest.completions = ptr.To(want - accounted)
		return shortfall{rest: rest}, accounted < want
	}
	if accounted >= want && slices.ContainsFunc(states, func(s shardState) bool { return s.carried > 0 && s.carriedIndexes == "" }) {
		// Parts an older hub wrote carry no set of the indexes they carried, only the
		// count: the count is all there is to go by.
		return shortfall{}, false
	}
	rest.indexed = true
	rest.indexes = indexset.Range(0, int(want)).Minus(covered)
	rest.completions = ptr.To(int32(rest.indexes.Len()))
	return shortfall{rest: rest}, rest.indexes.Len() > 0
}

// carriedSet is the fleet indexes whose success the shard carries from evicted ones.
func (s shard) carriedSet() indexset.Set {
	if s.carriedIndexes == "" {
		return indexset.Set{}
	}
	return indexset.Parse(s.carriedIndexes, math.MaxInt32)
}

// restPart names the shards of the rest placed by decision n of the job with UID uid:
// each decision's names are its own, so a rest placed again after a failed write never
// meets a Work an earlier attempt wrote.
func restPart(uid string, decision int32) string {
	return names.Hash("fleetjob-rest", uid, strconv.Itoa(int(decision)))[:8]
}

// planShortfall decides the shards that make up what short says is missing, as decision
// n: whole shards on the eligible clusters (sorted; fit counts their nodes that fit) that
// hold none, for a Single or Duplicate job; the rest divided as the job's division
// divides, for a Divided one. None when no cluster can take any of it.
func planShortfall(fj *musterv1.FleetJob, short shortfall, n int32, states []shardState, eligible []string, fit map[string]int) []shard {
	part := restPart(string(fj.UID), n)
	tmpl := fj.Spec.Template.Spec
	var out []shard
	switch {
	case short.copies > 0 && fj.Spec.Placement.Mode == musterv1.PlacementDuplicate:
		for _, c := range eligible {
			if len(out) == short.copies {
				break
			}
			if !slices.ContainsFunc(states, func(s shardState) bool { return s.cluster == c }) {
				out = append(out, shard{cluster: c, parallelism: tmpl.Parallelism, completions: tmpl.Completions})
			}
		}
	case short.copies > 0:
		out = place(fj, eligible, fit)
	default:
		out = placeRemainder(fj, shardState{}, short.rest, 0, eligible, fit)
	}
	for i := range out {
		out[i].part, out[i].replaces, out[i].carried, out[i].carriedIndexes = part, "", 0, ""
	}
	return out
}

// sameShare says whether two shards of a job run the same share of it in the same place.
func sameShare(a, b shard) bool {
	return a.cluster == b.cluster && a.part == b.part && a.fleetIndexes == b.fleetIndexes &&
		ptr.Deref(a.completions, -1) == ptr.Deref(b.completions, -1) && ptr.Equal(a.indexes, b.indexes)
}

// inForce leaves out of states the shards whose eviction fj's status records: their
// Works go, and their share is their parts'.
func inForce(fj *musterv1.FleetJob, states []shardState) []shardState {
	return slices.DeleteFunc(slices.Clone(states), func(s shardState) bool { return withdrawn(fj, s) })
}

// notWrittenMessage says which shards the hub could not write, and why, in a size that
// does not grow with their number.
func notWrittenMessage(errs []error) string {
	var first error
	n := 0
	for _, err := range errs {
		if err != nil {
			if first == nil {
				first = err
			}
			n++
		}
	}
	if n == 1 {
		return fmt.Sprintf("the hub could not write a shard (%v); its share is placed again", first)
	}
	return fmt.Sprintf("the hub could not write %d shards (the first: %v); their share is placed again", n, first)
}

// restResult is what fillShortfall placed: the shards it wrote, the events that announce
// them, and when to look again.
type restResult struct {
	shards  []shardState
	events  []event
	requeue time.Duration
}

// fillShortfall places what the shards in force leave of fj's recorded placement, as a
// decision of its own recorded before its Works are written. When no cluster can take
// it, a Duplicate job drops the copies (as an eviction does) and any other job says so
// on Scheduled=False and waits: it is never Complete without it.
func (r *Reconciler) fillShortfall(ctx context.Context, snap *snapshot, current []shardState) (restResult, error) {
	fj := snap.fj
	short, ok := shortfallOf(fj, current)
	if !ok {
		return restResult{}, nil
	}
	var members musterv1.MemberClusterList
	if err := r.Client.List(ctx, &members); err != nil {
		return restResult{}, fmt.Errorf("listing member clusters: %w", err)
	}
	eligible, excluded := clusters.Eligible(&fj.Spec.Placement.Placement, members.Items)
	fit := map[string]int{}
	if r.Inventory != nil {
		fit = r.Inventory.EligibleCountByCluster(&fj.Spec.Template.Spec.Template.Spec)
	}
	decision := recordedDecisions(fj) + 1
	planned := planShortfall(fj, short, decision, current, eligible, fit)
	status := fj.Status.DeepCopy()
	copies := int(ptr.Deref(status.Placement, musterv1.FleetJobPlacementRecord{}).Copies)
	if fj.Spec.Placement.Mode == musterv1.PlacementDuplicate && len(planned) < short.copies {
		copies -= short.copies - len(planned)
	}
	if len(planned) == 0 {
		return r.holdShortfall(ctx, fj, short, copies, clusters.DescribeExcluded(excluded))
	}
	var fence time.Duration
	if r.Failover != nil {
		fence, _ = r.fencing(fj)
	}
	names := make([]string, len(planned))
	for i := range planned {
		planned[i].fence, names[i] = fence, planned[i].cluster
	}
	works, err := r.shardWorks(ctx, fj, planned)
	if err != nil {
		return restResult{}, err
	}
	status.Placement = r.decided(fj, copies)
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: musterv1.FleetJobScheduled, Status: metav1.ConditionTrue, Reason: musterv1.FleetJobReasonPlaced, ObservedGeneration: fj.Generation,
		Message: fmt.Sprintf("%s; what no shard accounted for was placed again on %s", placedMessage(fj.Spec.Placement.Mode, names), clusters.Names(names)),
	})
	if err := r.updateStatus(ctx, fj, *status); err != nil {
		return restResult{}, err
	}
	if err := r.writeDecided(ctx, fj, works); err != nil {
		return restResult{}, err
	}
	log.FromContext(ctx).Info("placed again the share of the FleetJob that no shard accounted for", "clusters", clusters.Names(names), "decision", decision)
	out := restResult{events: []event{{corev1.EventTypeNormal, musterv1.FleetJobReasonRestPlaced, "Place", restNote(fj, short, names)}}}
	for i := range planned {
		out.shards = append(out.shards, shardState{shard: planned[i], workUID: works[i].UID})
	}
	return out, nil
}

// holdShortfall records that no cluster can take what fj's shards leave unplaced: a
// Duplicate job keeps the copies it has; any other waits with Scheduled=False.
func (r *Reconciler) holdShortfall(ctx context.Context, fj *musterv1.FleetJob, short shortfall, copies int, excluded string) (restResult, error) {
	status := fj.Status.DeepCopy()
	if fj.Spec.Placement.Mode == musterv1.PlacementDuplicate {
		status.Placement.Copies = int32(max(copies, 0))
		if err := r.updateStatus(ctx, fj, *status); err != nil {
			return restResult{}, err
		}
		return restResult{events: []event{{corev1.EventTypeWarning, musterv1.FleetJobReasonFailedOver, "Place",
			fmt.Sprintf("dropped %d copies of the job that no shard holds any longer: no other cluster can take them; %s", short.copies, excluded)}}}, nil
	}
	c := metav1.Condition{
		Type: musterv1.FleetJobScheduled, Status: metav1.ConditionFalse, Reason: musterv1.ReasonNoEligibleClusters, ObservedGeneration: fj.Generation,
		Message: fmt.Sprintf("%s no shard and no member cluster can take it; %s", restWhat(fj, short), excluded),
	}
	if prev := meta.FindStatusCondition(status.Conditions, musterv1.FleetJobScheduled); prev == nil || prev.Message != c.Message {
		log.FromContext(ctx).Info("no member cluster can take the share of the FleetJob that no shard accounts for", "excluded", excluded)
	}
	meta.SetStatusCondition(&status.Conditions, c)
	if err := r.updateStatus(ctx, fj, *status); err != nil {
		return restResult{}, err
	}
	return restResult{requeue: heldRecheck}, nil
}

// restWhat names what a shortfall is missing, in counts.
func restWhat(fj *musterv1.FleetJob, short shortfall) string {
	switch {
	case short.copies == 1 && fj.Spec.Placement.Mode != musterv1.PlacementDuplicate:
		return "the job has"
	case short.copies > 0:
		return fmt.Sprintf("%d copies of the job have", short.copies)
	}
	return fmt.Sprintf("%d of the job's completions have", ptr.Deref(short.rest.completions, 0))
}

// restNote announces a shortfall placed again.
func restNote(fj *musterv1.FleetJob, short shortfall, clusterNames []string) string {
	what := strings.TrimSuffix(strings.TrimSuffix(restWhat(fj, short), " have"), " has")
	return fmt.Sprintf("placed %s again on %s: no shard accounted for it (a Work the hub could not write, or a member removed with its shards)", what, clusters.Names(clusterNames))
}
