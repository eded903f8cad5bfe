package fleetjob

import (
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/musterhq/muster/api/indexset"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/api/workloadspread"
	"github.com/musterhq/muster/hub/shards"
	"github.com/musterhq/muster/placement/clusters"
	"github.com/musterhq/muster/placement/division"
)

// place decides the shards of a FleetJob that has none yet. eligible are the clusters the
// placement allows, sorted; fit counts each one's nodes that fit the pod template (the
// inventory's view of free capacity). It returns no shard when nothing can run.
func place(fj *musterv1.FleetJob, eligible []string, fit map[string]int) []shard {
	if len(eligible) == 0 {
		return nil
	}
	tmpl := fj.Spec.Template.Spec
	switch fj.Spec.Placement.Mode {
	case musterv1.PlacementDuplicate:
		out := make([]shard, len(eligible))
		for i, c := range eligible {
			out[i] = shard{cluster: c, parallelism: tmpl.Parallelism, completions: tmpl.Completions}
		}
		return out
	case musterv1.PlacementDivided:
		return divide(fj, eligible, fit)
	}
	// Single: the cluster where most nodes fit; ties go to the first by name.
	best := eligible[0]
	for _, c := range eligible[1:] {
		if fit[c] > fit[best] {
			best = c
		}
	}
	return []shard{{cluster: best, parallelism: tmpl.Parallelism, completions: tmpl.Completions}}
}

// divide splits parallelism and completions by the division's weights, or, without
// weights, by the clusters' fitting nodes. Indexed shards get contiguous index ranges.
func divide(fj *musterv1.FleetJob, eligible []string, fit map[string]int) []shard {
	return divideSpec(&fj.Spec.Template.Spec, fj.Spec.Placement.Division, eligible, fit)
}

// divideSpec divides a job of spec tmpl among eligible clusters as divide does.
func divideSpec(tmpl *batchv1.JobSpec, d *musterv1.Division, eligible []string, fit map[string]int) []shard {
	var weights []int32
	if d != nil && len(d.Weights) > 0 {
		weights = make([]int32, len(eligible))
		for _, w := range d.Weights {
			if i := slices.Index(eligible, w.ClusterName); i >= 0 {
				weights[i] = w.Weight
			}
		}
	} else {
		weights = division.FitWeights(eligible, fit)
	}
	pars := division.Split(ptr.Deref(tmpl.Parallelism, 1), weights)
	out := make([]shard, 0, len(eligible))
	for i, c := range eligible {
		out = append(out, shard{cluster: c, parallelism: ptr.To(pars[i])})
	}
	if tmpl.Completions != nil {
		return shareCompletions(tmpl, out, weights)
	}
	if ptr.Deref(tmpl.Parallelism, 1) == 0 {
		// Parallelism 0 runs nothing, as the built-in Job, on every cluster (as Single and
		// Duplicate place it): dropping every shard would read as no cluster can take it.
		return out
	}
	return slices.DeleteFunc(out, func(s shard) bool { return *s.parallelism == 0 })
}

// shareCompletions gives shards the job's completions in proportion to weights, with
// contiguous index ranges for an Indexed job. A shard with work runs at least one pod and
// never more than its completions; a shard left without completions is dropped. A job of
// parallelism 0 runs no pod anywhere, as the built-in Job.
func shareCompletions(tmpl *batchv1.JobSpec, shards []shard, weights []int32) []shard {
	least := int32(1)
	if ptr.Deref(tmpl.Parallelism, 1) == 0 {
		least = 0
	}
	completions := division.Split(*tmpl.Completions, weights)
	ranges := division.Ranges(completions)
	indexed := ptr.Deref(tmpl.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion
	out := make([]shard, 0, len(shards))
	for i, s := range shards {
		if completions[i] == 0 {
			continue
		}
		s.completions = ptr.To(completions[i])
		s.parallelism = ptr.To(min(max(ptr.Deref(s.parallelism, 0), least), completions[i]))
		if indexed {
			s.indexes = &musterv1.IndexRange{Start: ranges[i].Start, End: ranges[i].End}
		}
		out = append(out, s)
	}
	return out
}

// shardState is a placed shard and what its cluster reports.
type shardState struct {
	shard
	status *batchv1.JobStatus
	// applied: the agent created the shard's Job; applyError is the member's refusal of it.
	applied    bool
	applyError string
	// workUID is the Work that carries the shard.
	workUID types.UID
}

func jobCondition(s *batchv1.JobStatus, t batchv1.JobConditionType) bool {
	if s == nil {
		return false
	}
	for _, c := range s.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func shardPhase(s shardState) musterv1.JobPhase {
	switch {
	case s.status == nil:
		return musterv1.JobPending
	case jobCondition(s.status, batchv1.JobComplete):
		return musterv1.JobComplete
	case fencedBy(s) != "":
		// Not a failure of the job's: its agent stopped it for the hub to move it.
		return musterv1.JobRunning
	case jobCondition(s.status, batchv1.JobFailed):
		return musterv1.JobFailed
	case jobCondition(s.status, batchv1.JobSuspended):
		return musterv1.JobSuspended
	}
	return musterv1.JobRunning
}

// summarize computes the FleetJob's status from its shards (evicted ones are the caller's
// to add; short says they leave part of its recorded placement unplaced) and says which
// shards to stop:
// with shardFailurePolicy FailFast, the first failed shard fails the FleetJob and the
// others are suspended, which stops their pods without counting them as failures.
func summarize(fj *musterv1.FleetJob, shards []shardState, short bool, now time.Time) (musterv1.FleetJobStatus, []string) {
	status := *fj.Status.DeepCopy()
	status.ObservedGeneration = fj.Generation
	status.Clusters = nil
	status.Active, status.Ready, status.Succeeded, status.Failed = 0, 0, 0, 0
	var failed, finished []string
	for _, s := range shards {
		entry := clusterEntry(s)
		status.Clusters = append(status.Clusters, entry)
		status.Active += entry.Active
		status.Ready += entry.Ready
		status.Succeeded += entry.Succeeded + s.carried
		status.Failed += entry.Failed
		switch entry.Phase {
		case musterv1.JobFailed:
			failed = append(failed, s.key())
			finished = append(finished, s.key())
		case musterv1.JobComplete:
			finished = append(finished, s.key())
		}
	}
	status.Clusters, status.ClustersOmitted = boundEntries(status.Clusters)
	status.Progress, status.ClusterCount = progress(fj, shards, status.Succeeded)
	if status.StartTime == nil && len(shards) > 0 {
		status.StartTime = &metav1.Time{Time: now}
	}
	var stop []string
	setCond := func(t string, s metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: fj.Generation})
	}
	failFast := fj.Spec.ShardFailurePolicy != musterv1.ShardContinue
	// A job whose shards do not account for all its recorded placement (short) has a
	// share yet to place: its shards finishing does not finish it.
	switch {
	case len(failed) > 0 && failFast:
		setCond(musterv1.FleetJobFailed, metav1.ConditionTrue, musterv1.FleetJobReasonShardFailed, fmt.Sprintf("the shard in %s failed%s", describeKey(shards, failed[0]), shardFailure(shards, failed[0])))
		for _, s := range shards {
			if !slices.Contains(finished, s.key()) && !s.suspend {
				stop = append(stop, s.key())
			}
		}
	case short:
	case len(shards) > 0 && len(finished) == len(shards) && len(failed) > 0:
		described := make([]string, len(failed))
		for i, k := range failed {
			described[i] = describeKey(shards, k)
		}
		setCond(musterv1.FleetJobFailed, metav1.ConditionTrue, musterv1.FleetJobReasonShardsFailed, shardsFailedMessage(described))
	case len(shards) > 0 && len(finished) == len(shards):
		setCond(musterv1.FleetJobComplete, metav1.ConditionTrue, musterv1.FleetJobReasonShardsCompleted, fmt.Sprintf("%d pods succeeded in %d clusters", status.Succeeded, len(shards)))
	}
	if finishedFleet(&status) && status.CompletionTime == nil {
		status.CompletionTime = &metav1.Time{Time: now}
	}
	status.Phase = fleetPhase(&status, shards)
	return status, stop
}

// boundEntries keeps MaxClusterStatuses of the shards' entries, failed shards first,
// then unfinished ones, and counts the others.
func boundEntries(entries []musterv1.ClusterJobStatus) ([]musterv1.ClusterJobStatus, int32) {
	kept, omitted := shards.Bounded(entries, musterv1.MaxClusterStatuses, func(e musterv1.ClusterJobStatus) int {
		switch e.Phase {
		case musterv1.JobFailed:
			return 0
		case musterv1.JobComplete:
			return 2
		}
		return 1
	})
	return kept, int32(omitted)
}

// clusterEntry is a shard's entry in its FleetJob's status.
func clusterEntry(s shardState) musterv1.ClusterJobStatus {
	entry := musterv1.ClusterJobStatus{
		ClusterName: s.cluster, Subset: s.subset, Parallelism: s.parallelism, Completions: s.completions, Indexes: s.indexes, Phase: shardPhase(s),
		Part: s.part, Carried: s.carried,
	}
	if st := s.status; st != nil {
		entry.Active, entry.Ready, entry.Succeeded, entry.Failed = st.Active, ptr.Deref(st.Ready, 0), st.Succeeded, st.Failed
		entry.CompletedIndexes = fleetCompleted(s, st.CompletedIndexes)
	}
	return entry
}

// fleetCompleted rewrites a shard's completedIndexes ("0-2,5", local to its Job) in the
// fleet's indexes; a shard of a job that is not divided reports the fleet's own.
func fleetCompleted(s shardState, local string) string {
	if local == "" || (s.fleetIndexes == "" && (s.indexes == nil || s.indexes.Start == 0)) {
		return local
	}
	return s.fleet().Select(indexset.Parse(local, int(ptr.Deref(s.completions, 0)))).String()
}

// describeKey names the shard with the given key in messages.
func describeKey(shards []shardState, key string) string {
	for _, s := range shards {
		if s.key() == key {
			return s.describe()
		}
	}
	return key
}

func shardFailure(shards []shardState, key string) string {
	for _, s := range shards {
		if s.key() != key || s.status == nil {
			continue
		}
		for _, c := range s.status.Conditions {
			if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
				return fmt.Sprintf(": %s: %s", c.Reason, c.Message)
			}
		}
	}
	return ""
}

func finishedFleet(status *musterv1.FleetJobStatus) bool {
	return meta.IsStatusConditionTrue(status.Conditions, musterv1.FleetJobComplete) || meta.IsStatusConditionTrue(status.Conditions, musterv1.FleetJobFailed)
}

func fleetPhase(status *musterv1.FleetJobStatus, shards []shardState) musterv1.JobPhase {
	switch {
	case meta.IsStatusConditionTrue(status.Conditions, musterv1.FleetJobFailed):
		return musterv1.JobFailed
	case meta.IsStatusConditionTrue(status.Conditions, musterv1.FleetJobComplete):
		return musterv1.JobComplete
	case len(shards) == 0:
		return musterv1.JobPending
	}
	for _, s := range shards {
		if p := shardPhase(s); p == musterv1.JobRunning || p == musterv1.JobComplete {
			return musterv1.JobRunning
		}
	}
	if slices.ContainsFunc(shards, func(s shardState) bool { return shardPhase(s) == musterv1.JobSuspended }) {
		return musterv1.JobSuspended
	}
	return musterv1.JobPending
}

// shardConditions sets ShardsApplied and PodsSchedulable on status from what the shards'
// agents reported: a Job the member refused, or pods that wait for a node, would
// otherwise leave the FleetJob Pending with the cause only on a Work. It returns the
// conditions whose failure is news against prev, to be announced once.
func shardConditions(status *musterv1.FleetJobStatus, prev []metav1.Condition, states []shardState, generation int64) []metav1.Condition {
	if len(states) == 0 {
		return nil
	}
	reports := make([]shards.Report, len(states))
	for i, s := range states {
		reports[i] = shards.Report{Where: s.describe(), Applied: s.applied, ApplyError: s.applyError}
		if c := workloadspread.WaitingCondition(s.status); c != nil {
			reports[i].Unschedulable = c.Message
		}
	}
	var news []metav1.Condition
	applied, fresh := shards.AppliedCondition(musterv1.FleetJobShardsApplied, meta.FindStatusCondition(prev, musterv1.FleetJobShardsApplied), reports, generation)
	meta.SetStatusCondition(&status.Conditions, applied)
	if fresh {
		news = append(news, applied)
	}
	schedulable, fresh := shards.SchedulableCondition(musterv1.FleetJobPodsSchedulable, meta.FindStatusCondition(prev, musterv1.FleetJobPodsSchedulable), reports, generation)
	if schedulable != nil {
		meta.SetStatusCondition(&status.Conditions, *schedulable)
	}
	if fresh {
		news = append(news, *schedulable)
	}
	return news
}

// progress is the status' "<succeeded>/<completions>" summary and the number of distinct
// clusters with shards, for `kubectl get`. Completions sum the shards' (a shard without
// completions finishes at its first success, as upstream counts it, so 1); before any shard
// exists they are the template's.
func progress(fj *musterv1.FleetJob, shards []shardState, succeeded int32) (string, int32) {
	want := ptr.Deref(fj.Spec.Template.Spec.Completions, 1)
	clusters := map[string]bool{}
	if len(shards) > 0 {
		want = 0
	}
	for _, s := range shards {
		want += ptr.Deref(s.completions, 1) + s.carried
		clusters[s.cluster] = true
	}
	return fmt.Sprintf("%d/%d", succeeded, want), int32(len(clusters))
}

// placement is the first placement of a FleetJob without a spread.
type placement struct {
	// shards are the shards to create; none when no cluster can take the job.
	shards []shard
	// clusters names the shards' clusters; excluded says why the others cannot take it.
	clusters string
	excluded string
	// scheduled is the Scheduled condition once the shards exist (or, with no shard, at once).
	scheduled metav1.Condition
}

// decidePlacement chooses a FleetJob's clusters among members (place) and the Scheduled
// condition that reports them; fit counts each cluster's nodes that fit the pod template.
func decidePlacement(fj *musterv1.FleetJob, members []musterv1.MemberCluster, fit map[string]int) placement {
	eligible, excluded := clusters.Eligible(&fj.Spec.Placement.Placement, members)
	d := placement{shards: place(fj, eligible, fit), excluded: clusters.DescribeExcluded(excluded)}
	if len(d.shards) == 0 {
		d.scheduled = metav1.Condition{
			Type: musterv1.FleetJobScheduled, Status: metav1.ConditionFalse, Reason: musterv1.ReasonNoEligibleClusters,
			Message: "no member cluster can take the job; " + d.excluded, ObservedGeneration: fj.Generation,
		}
		return d
	}
	names := make([]string, len(d.shards))
	for i, s := range d.shards {
		names[i] = s.cluster
	}
	d.clusters = clusters.Names(names)
	d.scheduled = metav1.Condition{
		Type: musterv1.FleetJobScheduled, Status: metav1.ConditionTrue, Reason: musterv1.FleetJobReasonPlaced,
		Message: placedMessage(fj.Spec.Placement.Mode, names), ObservedGeneration: fj.Generation,
	}
	return d
}

// takenCondition is the False Scheduled condition of a FleetJob whose shard's name the
// Work taken, another object's, already holds.
func takenCondition(fj *musterv1.FleetJob, taken *musterv1.Work) *metav1.Condition {
	owner := "another object"
	if l := taken.Labels; l[musterv1.FleetJobNameLabel] != "" {
		owner = fmt.Sprintf("FleetJob %s/%s", l[musterv1.FleetJobNamespaceLabel], l[musterv1.FleetJobNameLabel])
	}
	msg := fmt.Sprintf("Work %s/%s, which would carry a shard, belongs to %s: delete that Work or rename this FleetJob or its WorkloadSpread subset",
		taken.Namespace, taken.Name, owner)
	return &metav1.Condition{Type: musterv1.FleetJobScheduled, Status: metav1.ConditionFalse, Reason: musterv1.ReasonShardNameTaken, Message: msg, ObservedGeneration: fj.Generation}
}

// scheduledNews are the events a change of the Scheduled condition from before to after
// makes: the first placement without a spread, and a shard name found taken (once, until
// the reason changes). A spread's placements are announced with its changes.
func scheduledNews(before, after *metav1.Condition) []event {
	switch {
	case after == nil:
		return nil
	case after.Reason == musterv1.ReasonShardNameTaken && (before == nil || before.Reason != musterv1.ReasonShardNameTaken):
		return []event{{corev1.EventTypeWarning, musterv1.ReasonShardNameTaken, "Place", after.Message}}
	case after.Reason == musterv1.FleetJobReasonPlaced && after.Status == metav1.ConditionTrue && (before == nil || before.Status != metav1.ConditionTrue):
		return []event{{corev1.EventTypeNormal, musterv1.FleetJobReasonPlaced, "Place", after.Message}}
	}
	return nil
}
