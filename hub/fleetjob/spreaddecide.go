package fleetjob

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/api/workloadspread"
	"github.com/musterhq/muster/hub/shards"
	"github.com/musterhq/muster/placement/subsets"
)

// DefaultUnschedulableWindow is how long an Adaptive spread keeps new pods off a subset
// whose pods could not be scheduled (workloadspread.DefaultUnschedulableWindow).
const DefaultUnschedulableWindow = workloadspread.DefaultUnschedulableWindow

// spreadSubset is what the decision knows of one subset: its spec, the clusters that may
// take new replicas and those where replicas may stay (both sorted; an unavailable
// cluster holds its shard but gets no more), and how many of each cluster's nodes fit its
// pods. New shards leave the decision without a pod template; the controller gives them
// the subset's.
type spreadSubset struct {
	spec     *musterv1.WorkloadSpreadSubset
	clusters []string
	holding  []string
	fit      map[string]int
}

// spreadDecision is the shards a spread wants.
type spreadDecision struct {
	// shards to keep or create, with their replicas; remove names the shards to delete.
	shards []shard
	remove []string
}

// decideSpread places fj's replicas (its parallelism) by the spread ws: subsets fill in
// order up to maxReplicas, a subset spanning clusters is divided by the nodes that fit,
// and changes move as few replicas as they can (placement/subsets.Rebalance). With an
// Adaptive strategy a subset whose pods waited for a node longer than
// rescheduleCriticalSeconds keeps only its running pods for the window. That decision is
// the WorkloadSpread controller's, and this one acts on it only once it is stored: a
// subset is passed over while its stored Schedulable condition is False/PodUnschedulable
// and its window lasts, so a spread's status never says a subset takes pods the shards
// have already left, and no round moves pods on a judgement a crash or a lost write would
// forget. The window's end is part of what was stored: from then the subset takes pods
// again, whether or not that controller has written True yet.
//
// A shard's completions are fixed when its Job is made, so a FleetJob with completions is
// divided once, on its first placement, and keeps its shards afterwards; so does any
// FleetJob once a shard finished, which means the job is winding down.
func decideSpread(fj *musterv1.FleetJob, ws *musterv1.WorkloadSpread, subs []spreadSubset, current []shardState, window time.Duration, now time.Time) spreadDecision {
	total := max(ptr.Deref(fj.Spec.Template.Spec.Parallelism, 1), 0)
	plans, gone := groupBySubset(subs, current)
	var d spreadDecision
	strategy := workloadspread.StrategyOf(ws, window)
	for i := range plans {
		plans[i].judge(ws, strategy, total, now)
	}
	if spreadFrozen(fj, current) {
		d.shards = keepShards(current)
	} else {
		d.shards, d.remove = rebalanceShards(plans, total)
		d.remove = append(gone, d.remove...)
		if completions := fj.Spec.Template.Spec.Completions; len(current) == 0 && completions != nil {
			d.shards = shareCompletions(&fj.Spec.Template.Spec, d.shards, parallelisms(d.shards))
		}
	}
	return d
}

// subsetPlan is one subset's part of a spread decision, filled in step by step: its
// shards now, what each of its clusters keeps, what the fill order needs of it, and the
// replicas it ends with.
type subsetPlan struct {
	spreadSubset
	current  []shardState
	kept     map[string]int32
	input    subsets.Subset
	replicas int32
}

// groupBySubset gives each subset its current shards; the keys of shards whose subset
// left the spread are returned apart, as their replicas are placed anew.
func groupBySubset(subs []spreadSubset, current []shardState) ([]subsetPlan, []string) {
	plans := make([]subsetPlan, len(subs))
	index := map[string]int{}
	for i, sub := range subs {
		plans[i].spreadSubset = sub
		index[sub.spec.Name] = i
	}
	var gone []string
	for _, s := range current {
		i, ok := index[s.subset]
		if !ok {
			gone = append(gone, s.key())
			continue
		}
		plans[i].current = append(plans[i].current, s)
	}
	return plans, gone
}

// judge reads whether the subset is passed over (its stored Schedulable condition) and
// fills in what the fill order needs of it.
func (p *subsetPlan) judge(ws *musterv1.WorkloadSpread, strategy workloadspread.Strategy, total int32, now time.Time) {
	unschedulable := strategy.Adaptive && markedUnschedulable(&ws.Status, p.spec.Name, strategy.Window, now)
	p.kept = map[string]int32{}
	p.input = subsets.Subset{Max: p.spec.MaxReplicas, Unschedulable: unschedulable}
	for _, s := range p.current {
		n := ptr.Deref(s.parallelism, 0)
		p.input.Current += n
		if unschedulable && podsWaiting(s.status) {
			// Only the pods that run stay; the waiting ones go to other subsets.
			n = min(n, ptr.Deref(s.status.Ready, 0))
		}
		p.kept[s.cluster] = n
		p.input.Keep += n
	}
	if len(p.clusters) == 0 {
		// No cluster takes new replicas: the subset keeps what it holds, nothing more.
		p.input.Max = ptr.To(intstr.FromInt32(p.held(total)))
	}
}

// markedUnschedulable says the WorkloadSpread controller stored the subset as
// Schedulable=False/PodUnschedulable and the window since then lasts at now. A subset
// whose pods still wait when it ends is marked anew by that controller, and that write
// brings the FleetJob here again.
func markedUnschedulable(status *musterv1.WorkloadSpreadStatus, subset string, window time.Duration, now time.Time) bool {
	st := subsetStatus(status, subset)
	if st == nil {
		return false
	}
	c := meta.FindStatusCondition(st.Conditions, musterv1.SubsetSchedulable)
	return c != nil && c.Status == metav1.ConditionFalse && c.Reason == musterv1.WorkloadSpreadReasonPodUnschedulable &&
		now.Before(c.LastTransitionTime.Add(window))
}

// held is what the subset's holding clusters keep, within its cap.
func (p *subsetPlan) held(total int32) int32 {
	var held int32
	for _, c := range p.holding {
		held += p.kept[c]
	}
	if c := subsets.Cap(p.spec.MaxReplicas, total); c >= 0 {
		held = min(held, c)
	}
	return held
}

// spreadFrozen says the shards stay as they are: their completions were fixed when their
// Jobs were made, or a finished shard means the job winds down.
func spreadFrozen(fj *musterv1.FleetJob, current []shardState) bool {
	return len(current) > 0 && (fj.Spec.Template.Spec.Completions != nil || slices.ContainsFunc(current, shardFinished))
}

// keepShards keeps every current shard.
func keepShards(current []shardState) []shard {
	out := make([]shard, 0, len(current))
	for _, s := range current {
		out = append(out, s.shard)
	}
	return out
}

// rebalanceShards gives each subset its replicas in fill order and divides them among
// its clusters; it returns the shards to keep or create and the keys of those to remove.
func rebalanceShards(plans []subsetPlan, total int32) ([]shard, []string) {
	in := make([]subsets.Subset, len(plans))
	for i := range plans {
		in[i] = plans[i].input
	}
	var want []shard
	var remove []string
	for i, n := range subsets.Rebalance(total, in) {
		plans[i].replicas = n
		w, r := plans[i].shards()
		want, remove = append(want, w...), append(remove, r...)
	}
	return want, remove
}

// shards divides the subset's replicas among its clusters: the shards to keep or create
// (in holding order) and the keys of its shards left with none (in cluster order).
func (p *subsetPlan) shards() ([]shard, []string) {
	byCluster := subsets.Divide(p.replicas, p.kept, p.clusters, p.holding, p.fit)
	existing := map[string]shard{}
	for _, s := range p.current {
		existing[s.cluster] = s.shard
	}
	var remove []string
	for _, c := range slices.Sorted(maps.Keys(existing)) {
		if byCluster[c] == 0 {
			remove = append(remove, existing[c].key())
		}
	}
	var want []shard
	for _, c := range p.holding {
		if byCluster[c] == 0 {
			continue
		}
		s, ok := existing[c]
		if !ok {
			s = shard{cluster: c, subset: p.spec.Name}
		}
		s.parallelism = ptr.To(byCluster[c])
		want = append(want, s)
	}
	return want, remove
}

// parallelisms are the shards' parallelism, as weights for sharing completions.
func parallelisms(shards []shard) []int32 {
	out := make([]int32, len(shards))
	for i, s := range shards {
		out[i] = ptr.Deref(s.parallelism, 0)
	}
	return out
}

func podsWaiting(status *batchv1.JobStatus) bool {
	return workloadspread.WaitingCondition(status) != nil
}

func shardFinished(s shardState) bool {
	p := shardPhase(s)
	return p == musterv1.JobComplete || p == musterv1.JobFailed
}

func subsetStatus(status *musterv1.WorkloadSpreadStatus, name string) *musterv1.WorkloadSpreadSubsetStatus {
	for i := range status.Subsets {
		if status.Subsets[i].Name == name {
			return &status.Subsets[i]
		}
	}
	return nil
}

// spreadChanges describes how the shards' replicas changed, for an event: "subset a in
// cluster m1 3→0; subset b in cluster m2 2→5"; empty when nothing changed.
func spreadChanges(current []shardState, want []shard) string {
	before := map[string]int32{}
	names := map[string]string{}
	for _, s := range current {
		before[s.key()] = ptr.Deref(s.parallelism, 0)
		names[s.key()] = s.describe()
	}
	after := map[string]int32{}
	for _, s := range want {
		after[s.key()] = ptr.Deref(s.parallelism, 0)
		names[s.key()] = s.describe()
	}
	keys := slices.Sorted(maps.Keys(names))
	slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(names[a], names[b]) })
	var parts []string
	for _, k := range keys {
		if before[k] != after[k] {
			parts = append(parts, fmt.Sprintf("%s %d→%d", names[k], before[k], after[k]))
		}
	}
	msg, _ := shards.Join(parts)
	return msg
}
