package fleetjob

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/shards"
	"github.com/musterhq/muster/placement/division"
	"github.com/musterhq/muster/placement/subsets"
)

// Reasons of a WorkloadSpread subset's Schedulable condition and of spread events.
const (
	ReasonSchedulable      = "Schedulable"
	ReasonPodUnschedulable = "PodUnschedulable"
	ReasonPlacedBySpread   = "PlacedBySpread"
	ReasonSpreadChanged    = "SpreadChanged"
)

// DefaultUnschedulableWindow is how long an Adaptive spread keeps new pods off a subset
// whose pods could not be scheduled before trying it again: OpenKruise's fixed 5 minutes.
const DefaultUnschedulableWindow = 300 * time.Second

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

// spreadDecision is the shards a spread wants and how it reports them.
type spreadDecision struct {
	// shards to keep or create, with their replicas; remove names the shards to delete.
	shards []shard
	remove []string
	status musterv1.WorkloadSpreadStatus
	// requeue is when a waiting pod crosses rescheduleCriticalSeconds or an
	// unschedulable window ends; zero when nothing waits.
	requeue time.Duration
}

// decideSpread places fj's replicas (its parallelism) by the spread ws: subsets fill in
// order up to maxReplicas, a subset spanning clusters is divided by the nodes that fit,
// and changes move as few replicas as they can (placement/subsets.Rebalance). With an
// Adaptive strategy a subset whose pods waited for a node longer than
// rescheduleCriticalSeconds keeps only its running pods for the window.
//
// A shard's completions are fixed when its Job is made, so a FleetJob with completions is
// divided once, on its first placement, and keeps its shards afterwards; so does any
// FleetJob once a shard finished, which means the job is winding down.
func decideSpread(fj *musterv1.FleetJob, ws *musterv1.WorkloadSpread, subs []spreadSubset, current []shardState, window time.Duration, now time.Time) spreadDecision {
	var d spreadDecision
	total := max(ptr.Deref(fj.Spec.Template.Spec.Parallelism, 1), 0)
	bySubset := map[string][]shardState{}
	for _, s := range current {
		if !slices.ContainsFunc(subs, func(sub spreadSubset) bool { return sub.spec.Name == s.subset }) {
			// The subset left the spread: its replicas are placed anew.
			d.remove = append(d.remove, s.key())
			continue
		}
		bySubset[s.subset] = append(bySubset[s.subset], s)
	}

	adaptive := ws.Spec.ScheduleStrategy.Type == musterv1.ScheduleAdaptive
	critical := 30 * time.Second
	if a := ws.Spec.ScheduleStrategy.Adaptive; a != nil && a.RescheduleCriticalSeconds != nil {
		critical = time.Duration(*a.RescheduleCriticalSeconds) * time.Second
	}
	conditions := make([]metav1.Condition, len(subs))
	in := make([]subsets.Subset, len(subs))
	kept := make([]map[string]int32, len(subs))
	for i, sub := range subs {
		var prev *metav1.Condition
		if st := subsetStatus(&ws.Status, sub.spec.Name); st != nil {
			prev = meta.FindStatusCondition(st.Conditions, musterv1.SubsetSchedulable)
		}
		var wake time.Duration
		conditions[i], wake = schedulable(prev, bySubset[sub.spec.Name], adaptive, critical, window, now)
		d.requeue = soonest(d.requeue, wake)
		unschedulable := adaptive && conditions[i].Status == metav1.ConditionFalse
		kept[i] = map[string]int32{}
		var currentReplicas, keep int32
		for _, s := range bySubset[sub.spec.Name] {
			p := ptr.Deref(s.parallelism, 0)
			currentReplicas += p
			if unschedulable && podsWaiting(s.status) {
				// Only the pods that run stay; the waiting ones go to other subsets.
				p = min(p, ptr.Deref(s.status.Ready, 0))
			}
			kept[i][s.cluster] = p
			keep += p
		}
		in[i] = subsets.Subset{Max: sub.spec.MaxReplicas, Current: currentReplicas, Unschedulable: unschedulable, Keep: keep}
		if len(sub.clusters) == 0 {
			// No cluster takes new replicas: the subset keeps what it holds, nothing more.
			var held int32
			for _, c := range sub.holding {
				held += kept[i][c]
			}
			if c := subsets.Cap(sub.spec.MaxReplicas, total); c >= 0 {
				held = min(held, c)
			}
			in[i].Max = ptr.To(intstr.FromInt32(held))
		}
	}

	replicas := make([]int32, len(subs))
	if frozen := len(current) > 0 && (fj.Spec.Template.Spec.Completions != nil || slices.ContainsFunc(current, shardFinished)); frozen {
		d.remove = nil
		for _, s := range current {
			d.shards = append(d.shards, s.shard)
		}
		for i := range subs {
			replicas[i] = in[i].Current
		}
	} else {
		replicas = subsets.Rebalance(total, in)
		for i, sub := range subs {
			byCluster := divideSubset(replicas[i], kept[i], sub.clusters, sub.holding, sub.fit)
			existing := map[string]shard{}
			for _, s := range bySubset[sub.spec.Name] {
				existing[s.cluster] = s.shard
			}
			for _, c := range slices.Sorted(maps.Keys(existing)) {
				if byCluster[c] == 0 {
					d.remove = append(d.remove, existing[c].key())
				}
			}
			for _, c := range sub.holding {
				n := byCluster[c]
				if n == 0 {
					continue
				}
				s, ok := existing[c]
				if !ok {
					s = shard{cluster: c, subset: sub.spec.Name}
				}
				s.parallelism = ptr.To(n)
				d.shards = append(d.shards, s)
			}
		}
		if tmpl := &fj.Spec.Template.Spec; len(current) == 0 && tmpl.Completions != nil {
			weights := make([]int32, len(d.shards))
			for i, s := range d.shards {
				weights[i] = ptr.Deref(s.parallelism, 0)
			}
			d.shards = shareCompletions(tmpl, d.shards, weights)
		}
	}

	d.status = musterv1.WorkloadSpreadStatus{ObservedGeneration: ws.Generation}
	for i, sub := range subs {
		st := musterv1.WorkloadSpreadSubsetStatus{Name: sub.spec.Name, Replicas: replicas[i], MissingReplicas: -1}
		if c := subsets.Cap(sub.spec.MaxReplicas, total); c >= 0 {
			st.MissingReplicas = max(c-replicas[i], 0)
		}
		meta.SetStatusCondition(&st.Conditions, conditions[i])
		for _, s := range d.shards {
			if s.subset == sub.spec.Name {
				st.Clusters = append(st.Clusters, musterv1.SubsetClusterStatus{ClusterName: s.cluster, Replicas: ptr.Deref(s.parallelism, 0)})
			}
		}
		d.status.Subsets = append(d.status.Subsets, st)
		d.status.Replicas += st.Replicas
	}
	d.status.SubsetReplicas = subsetSummary(d.status.Subsets)
	return d
}

// schedulable decides a subset's Schedulable condition and how long until it may change.
// A Fixed spread only reports pods that wait for a node. An Adaptive one turns False once
// a pod waited rescheduleCriticalSeconds and stays False for window, whatever the pods do
// meanwhile; then the subset is tried again.
func schedulable(prev *metav1.Condition, shards []shardState, adaptive bool, critical, window time.Duration, now time.Time) (metav1.Condition, time.Duration) {
	var since time.Time
	var message string
	for _, s := range shards {
		if c := waitingCondition(s.status); c != nil && (since.IsZero() || c.LastTransitionTime.Time.Before(since)) {
			since, message = c.LastTransitionTime.Time, fmt.Sprintf("%s: %s", s.describe(), c.Message)
		}
	}
	ok := metav1.Condition{Type: musterv1.SubsetSchedulable, Status: metav1.ConditionTrue, Reason: ReasonSchedulable, Message: "no pod waits for a node longer than allowed", LastTransitionTime: metav1.NewTime(now)}
	if prev != nil && prev.Status == metav1.ConditionTrue {
		ok.LastTransitionTime = prev.LastTransitionTime
	}
	if !adaptive {
		if since.IsZero() {
			return ok, 0
		}
		return metav1.Condition{Type: musterv1.SubsetSchedulable, Status: metav1.ConditionFalse, Reason: ReasonPodUnschedulable, Message: message, LastTransitionTime: metav1.NewTime(since)}, 0
	}
	if prev != nil && prev.Status == metav1.ConditionFalse && prev.Reason == ReasonPodUnschedulable {
		if end := prev.LastTransitionTime.Add(window); now.Before(end) {
			return *prev, end.Sub(now)
		}
	}
	if since.IsZero() {
		return ok, 0
	}
	if waited := now.Sub(since); waited < critical {
		return ok, critical - waited
	}
	return metav1.Condition{
		Type: musterv1.SubsetSchedulable, Status: metav1.ConditionFalse, Reason: ReasonPodUnschedulable, LastTransitionTime: metav1.NewTime(now),
		Message: fmt.Sprintf("pods waited more than %s for a node (%s); new pods go to later subsets until %s",
			critical, message, now.Add(window).UTC().Format(time.RFC3339)),
	}, window
}

// waitingCondition is the shard's True PodsUnschedulable condition, if any.
func waitingCondition(status *batchv1.JobStatus) *batchv1.JobCondition {
	if status == nil {
		return nil
	}
	for i := range status.Conditions {
		if c := &status.Conditions[i]; c.Type == musterv1.JobPodsUnschedulable && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

func podsWaiting(status *batchv1.JobStatus) bool { return waitingCondition(status) != nil }

func shardFinished(s shardState) bool {
	p := shardPhase(s)
	return p == musterv1.JobComplete || p == musterv1.JobFailed
}

// divideSubset divides a subset's n replicas among its clusters, starting from what each
// keeps now: clusters the subset no longer holds give theirs up, a smaller n takes from
// the last clusters first, and a larger n goes to the clusters that take new replicas, in
// proportion to the nodes that fit (evenly when none is known to fit).
func divideSubset(n int32, kept map[string]int32, clusters, holding []string, fit map[string]int) map[string]int32 {
	out := map[string]int32{}
	var sum int32
	for _, c := range holding {
		out[c] = kept[c]
		sum += kept[c]
	}
	for i := len(holding) - 1; i >= 0 && sum > n; i-- {
		take := min(out[holding[i]], sum-n)
		out[holding[i]] -= take
		sum -= take
	}
	if sum < n && len(clusters) > 0 {
		for i, add := range division.Split(n-sum, fitWeights(clusters, fit)) {
			out[clusters[i]] += add
		}
	}
	return out
}

func subsetStatus(status *musterv1.WorkloadSpreadStatus, name string) *musterv1.WorkloadSpreadSubsetStatus {
	for i := range status.Subsets {
		if status.Subsets[i].Name == name {
			return &status.Subsets[i]
		}
	}
	return nil
}

// soonest is the earlier of two requeue delays, zero meaning none.
func soonest(a, b time.Duration) time.Duration {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
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

// subsetSummary is the status' one-line view of the subsets for `kubectl get`: each
// subset's replicas, and its cap when it has one ("gpu 4/4, cpu 2").
func subsetSummary(subsets []musterv1.WorkloadSpreadSubsetStatus) string {
	parts := make([]string, len(subsets))
	for i, s := range subsets {
		parts[i] = fmt.Sprintf("%s %d", s.Name, s.Replicas)
		if s.MissingReplicas >= 0 {
			parts[i] += fmt.Sprintf("/%d", s.Replicas+s.MissingReplicas)
		}
	}
	return strings.Join(parts, ", ")
}
