package broadcastjob

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bcj "github.com/musterhq/muster/api/broadcastjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/shards"
	"github.com/musterhq/muster/placement/parallelism"
)

// takenRetry paces the check of a shard name another object's Work holds: that Work's
// removal brings back its own owner, not this job.
const takenRetry = 30 * time.Second

// noPlacementStatus is the status of a BroadcastJob without placement on the hub, where
// nothing runs it unless the hub's cluster is also a member: NodesEligible=False, phase
// Pending, so it does not sit there without a word. ok is false once the job has any
// condition: the hub said so already, or an agent in this cluster runs the job and
// reports its own NodesEligible (which replaces this one).
func noPlacementStatus(job *musterv1.BroadcastJob) (status musterv1.BroadcastJobStatus, ok bool) {
	if len(job.Status.Conditions) > 0 {
		return job.Status, false
	}
	status = *job.Status.DeepCopy()
	status.ObservedGeneration = job.Generation
	bcj.SetCondition(&status, musterv1.BroadcastJobNodesEligible, metav1.ConditionFalse, musterv1.BroadcastJobReasonNoPlacement,
		"spec.placement is not set: a BroadcastJob on the hub needs spec.placement to select the member clusters it runs in (without one, only a member cluster's agent runs it, on that member's nodes)")
	status.Phase = bcj.Phase(&status)
	return status, true
}

// cluster is one member cluster as the hub sees it for a job.
type cluster struct {
	name string
	// eligible: the placement allows new work there now.
	eligible bool
	// hasShard: a Work carries the job's shard there; shard is what it says.
	hasShard bool
	shard    shardSpec
	// reported is the shard's status as its agent fed it back; nil before the first report.
	reported *musterv1.BroadcastJobStatus
	// inventoryDesired is how many of the cluster's nodes fit the pod template according
	// to the hub's inventory; it stands in for desired until the agent reports.
	inventoryDesired int32
	// applied: the agent created the shard; applyError is the member's refusal of it.
	applied    bool
	applyError string
	// withdrawn: the shard was evicted in an earlier round and its Work is being
	// removed; evicted: it is evicted in this one. Either way the cluster no longer runs
	// the job.
	withdrawn bool
	evicted   *musterv1.ShardEviction
}

type fleetObserved struct {
	job      *musterv1.BroadcastJob
	clusters []cluster
	// members are the member clusters, for failover.
	members []musterv1.MemberCluster
	// excluded counts the clusters the placement leaves out, by reason.
	excluded map[string]int
	now      time.Time
}

type fleetPlan struct {
	// pause sets the hub job's spec.paused (failurePolicy Pause); nothing else happens.
	pause bool
	// news are the conditions reporting a shard failure that the job's status did not
	// report yet, to be announced (event and log) once the status is written.
	news []metav1.Condition
	// shards is the shard every listed cluster must carry.
	shards map[string]shardSpec
	status musterv1.BroadcastJobStatus
	// requeueAfter is when time alone changes the decision (a deadline).
	requeueAfter time.Duration
}

// decideFleet computes the fleet-wide plan for a hub job that has not finished: count the
// clusters' reports, decide whether the job ends, and otherwise plan each cluster's shard
// and the job's conditions.
func decideFleet(o fleetObserved) fleetPlan {
	job := o.job
	fleet := countFleet(o.clusters)
	status := startFleetStatus(o)
	entries, omitted := boundEntries(fleet.entries)
	status.Clusters = append(entries, evictedEntries(job.Status.Clusters, o.clusters, running(fleet.entries))...)
	status.ClustersOmitted = omitted
	status.BroadcastCounts = fleet.totals
	status.Parallelism = parallelism.Resolve(job.Spec.Parallelism, fleet.totals.Desired)

	p := fleetPlan{shards: map[string]shardSpec{}, news: appliedCondition(&status, job, fleet.running)}
	end, requeueAfter := decideFleetEnd(o, status, fleet)
	p.requeueAfter = requeueAfter
	if end != nil {
		return finishFleet(p, status, *end, fleet.running, o.now)
	}
	p.pause = bcj.PausesNow(job, fleet.totals.Failed)
	p.shards = planShards(fleet.running, status.Parallelism, job.Spec.Paused || p.pause)
	setShardParallelism(status.Clusters, p.shards)
	setPaused(&status, job, p.pause, fleet.firstFailed)
	setFleetNodesEligible(&status, fleet.running, o.excluded)
	status.Phase = bcj.Phase(&status)
	p.status = status
	return p
}

// running names the clusters with a live entry.
func running(entries []musterv1.ClusterBroadcastStatus) map[string]bool {
	names := make(map[string]bool, len(entries))
	for _, e := range entries {
		names[e.ClusterName] = true
	}
	return names
}

// boundEntries keeps MaxClusterStatuses of the clusters' entries, those with failed pods
// first, then unfinished ones, and counts the others.
func boundEntries(entries []musterv1.ClusterBroadcastStatus) ([]musterv1.ClusterBroadcastStatus, int32) {
	kept, omitted := shards.Bounded(entries, musterv1.MaxClusterStatuses, func(e musterv1.ClusterBroadcastStatus) int {
		switch {
		case e.Failed > 0:
			return 0
		case e.Phase == musterv1.BroadcastJobCompleted:
			return 2
		}
		return 1
	})
	return kept, int32(omitted)
}

// startFleetStatus is the job's status as this round starts from it; the first round
// stamps the start time.
func startFleetStatus(o fleetObserved) musterv1.BroadcastJobStatus {
	status := *o.job.Status.DeepCopy()
	status.ObservedGeneration = o.job.Generation
	if status.StartTime == nil {
		status.StartTime = &metav1.Time{Time: o.now}
	}
	return status
}

// fleetTally is what the clusters that run the job say, walked once.
type fleetTally struct {
	// running are the clusters with a shard or eligible for one, in the observed order.
	running []*cluster
	// entries is status.clusters: one entry per running cluster.
	entries []musterv1.ClusterBroadcastStatus
	// totals adds up the running clusters' counts.
	totals musterv1.BroadcastCounts
	// firstFailed is the first running cluster with a failed pod.
	firstFailed *cluster
}

// countFleet adds up the clusters that run the job. A cluster's counts are its agent's
// report, or until the first report, the nodes the hub's inventory says fit.
func countFleet(clusters []cluster) fleetTally {
	var t fleetTally
	for i := range clusters {
		c := &clusters[i]
		if (!c.hasShard && !c.eligible) || c.withdrawn || c.evicted != nil {
			continue
		}
		t.running = append(t.running, c)
		counts := musterv1.BroadcastCounts{Desired: c.inventoryDesired}
		entry := musterv1.ClusterBroadcastStatus{ClusterName: c.name, Parallelism: c.shard.parallelism, Phase: musterv1.BroadcastJobPending}
		if c.reported != nil {
			counts = c.reported.BroadcastCounts
			entry.Phase = c.reported.Phase
		}
		entry.BroadcastCounts = counts
		t.entries = append(t.entries, entry)
		t.totals.Desired += counts.Desired
		t.totals.Active += counts.Active
		t.totals.Succeeded += counts.Succeeded
		t.totals.Failed += counts.Failed
		if counts.Failed > 0 && t.firstFailed == nil {
			t.firstFailed = c
		}
	}
	return t
}

// fleetEnding is how a hub job ends: the condition it gets, why, and the message each
// unfinished shard is terminated with.
type fleetEnding struct {
	condition, reason, message string
}

// decideFleetEnd says whether the job ends in this round, in order of precedence: a
// failure under FailFast, the deadline, every cluster done. requeueAfter is when the
// deadline will pass, for a job that goes on or completes before it.
func decideFleetEnd(o fleetObserved, status musterv1.BroadcastJobStatus, fleet fleetTally) (end *fleetEnding, requeueAfter time.Duration) {
	job := o.job
	if bcj.FailurePolicy(&job.Spec) == musterv1.FailureFailFast && fleet.firstFailed != nil {
		return &fleetEnding{musterv1.BroadcastJobFailed, musterv1.BroadcastJobReasonPodFailed, fmt.Sprintf("a pod failed in cluster %s (failurePolicy FailFast)%s",
			fleet.firstFailed.name, failedDetail(fleet.firstFailed.reported))}, 0
	}
	if d, ok := bcj.Deadline(job, status.StartTime.Time); ok {
		if !o.now.Before(d) {
			return &fleetEnding{musterv1.BroadcastJobFailed, musterv1.BroadcastJobReasonDeadlineExceeded,
				fmt.Sprintf("the job ran longer than activeDeadlineSeconds (%ds)", *job.Spec.CompletionPolicy.ActiveDeadlineSeconds)}, 0
		}
		requeueAfter = d.Sub(o.now)
	}
	return fleetCompletion(job, fleet), requeueAfter
}

// fleetCompletion ends a job of completionPolicy Always once the fleet is done (see
// fleetDone): Complete, or Failed if any pod failed and failurePolicy is not Continue
// (under which failures never fail the job, as on a member).
func fleetCompletion(job *musterv1.BroadcastJob, fleet fleetTally) *fleetEnding {
	if job.Spec.CompletionPolicy.Type == musterv1.CompletionNever || !fleetDone(fleet.running, fleet.totals) {
		return nil
	}
	totals, clusters := fleet.totals, len(fleet.running)
	switch {
	case totals.Failed == 0:
		return &fleetEnding{musterv1.BroadcastJobComplete, musterv1.BroadcastJobReasonCompleted, fmt.Sprintf("%d pods succeeded across %d clusters", totals.Succeeded, clusters)}
	case bcj.FailurePolicy(&job.Spec) == musterv1.FailureContinue:
		return &fleetEnding{musterv1.BroadcastJobComplete, musterv1.BroadcastJobReasonCompleted,
			fmt.Sprintf("%d pods succeeded, %d failed across %d clusters (failurePolicy Continue)", totals.Succeeded, totals.Failed, clusters)}
	}
	return &fleetEnding{musterv1.BroadcastJobFailed, musterv1.BroadcastJobReasonPodsFailed,
		fmt.Sprintf("%d of %d pods failed across %d clusters", totals.Failed, totals.Succeeded+totals.Failed, clusters)}
}

// finishFleet makes p the job's last plan: every existing shard stays, and those not yet
// finished are terminated with the job's message; the job's status is final from here.
func finishFleet(p fleetPlan, status musterv1.BroadcastJobStatus, end fleetEnding, running []*cluster, now time.Time) fleetPlan {
	for _, c := range running {
		if !c.hasShard {
			continue
		}
		s := c.shard
		if c.reported == nil || !bcj.Finished(c.reported) {
			s.terminate = end.message
		}
		p.shards[c.name] = s
	}
	if end.reason != musterv1.BroadcastJobReasonCompleted {
		// The pods being stopped count as failed, as each cluster's agent counts those it
		// stops: they did not get to finish.
		stopRunning(&status)
	}
	status.CompletionTime = &metav1.Time{Time: now}
	bcj.SetCondition(&status, end.condition, metav1.ConditionTrue, end.reason, end.message)
	bcj.SetCondition(&status, musterv1.BroadcastJobPaused, metav1.ConditionFalse, end.reason, "the job finished")
	status.Phase = bcj.Phase(&status)
	p.status = status
	return p
}

// stopRunning counts the running pods of a job that ends without them as failed, in each
// cluster's entry and in the totals.
func stopRunning(status *musterv1.BroadcastJobStatus) {
	status.Clusters = slices.Clone(status.Clusters)
	for i := range status.Clusters {
		c := &status.Clusters[i]
		if c.Phase == musterv1.BroadcastJobEvicted {
			continue
		}
		c.Failed += c.Active
		c.Active = 0
	}
	status.Failed += status.Active
	status.Active = 0
}

// planShards gives every running cluster its shard: paused or not, and its share of the
// job's parallelism, if it has one.
func planShards(running []*cluster, budget *int32, paused bool) map[string]shardSpec {
	var shares map[string]int32
	if budget != nil {
		shares = parallelism.Divide(*budget, budgetClusters(running))
	}
	planned := make(map[string]shardSpec, len(running))
	for _, c := range running {
		s := shardSpec{paused: paused}
		if shares != nil {
			v := shares[c.name]
			s.parallelism = &v
		}
		planned[c.name] = s
	}
	return planned
}

// setShardParallelism shows each cluster's planned share in status.clusters.
func setShardParallelism(entries []musterv1.ClusterBroadcastStatus, planned map[string]shardSpec) {
	for i := range entries {
		if s, ok := planned[entries[i].ClusterName]; ok {
			entries[i].Parallelism = s.parallelism
		}
	}
}

// setPaused sets the Paused condition of a running job: True while spec.paused is set or
// the job pauses in this round (pausedNow, on firstFailed's failure), False otherwise.
func setPaused(status *musterv1.BroadcastJobStatus, job *musterv1.BroadcastJob, pausedNow bool, firstFailed *cluster) {
	if !job.Spec.Paused && !pausedNow {
		bcj.SetCondition(status, musterv1.BroadcastJobPaused, metav1.ConditionFalse, musterv1.BroadcastJobReasonNotPaused, "the job creates pods")
		return
	}
	failure := ""
	if pausedNow {
		failure = fmt.Sprintf("a pod failed in cluster %s (failurePolicy Pause)", firstFailed.name)
	}
	reason, msg := bcj.PausedReason(&job.Status, pausedNow, failure)
	bcj.SetCondition(status, musterv1.BroadcastJobPaused, metav1.ConditionTrue, reason, msg)
}

// setFleetNodesEligible says whether any cluster has a node for the job's pod, and if
// none, whether the placement left no cluster or no cluster's node fits.
func setFleetNodesEligible(status *musterv1.BroadcastJobStatus, running []*cluster, excluded map[string]int) {
	switch {
	case len(running) == 0:
		bcj.SetCondition(status, musterv1.BroadcastJobNodesEligible, metav1.ConditionFalse, musterv1.ReasonNoEligibleClusters, noEligibleClusters(excluded))
	case status.Desired == 0:
		bcj.SetCondition(status, musterv1.BroadcastJobNodesEligible, metav1.ConditionFalse, musterv1.BroadcastJobReasonNoEligibleNodes,
			"no node fits the pod template in "+clusterNames(running))
	default:
		bcj.SetCondition(status, musterv1.BroadcastJobNodesEligible, metav1.ConditionTrue, musterv1.BroadcastJobReasonNodesEligible,
			nodesEligibleMessage(status.Desired, len(running)))
	}
}

// fleetDone: every cluster with work has reported its shard finished, or has neither a
// node to run on nor a running pod, and the fleet as a whole had something to run. A
// paused shard's pods whose nodes are gone still run (desired no longer counts them).
func fleetDone(running []*cluster, totals musterv1.BroadcastCounts) bool {
	if len(running) == 0 || totals.Desired == 0 {
		return false
	}
	for _, c := range running {
		if !c.hasShard || c.reported == nil {
			return false
		}
		if !bcj.Finished(c.reported) && (c.reported.Desired > 0 || c.reported.Active > 0) {
			return false
		}
	}
	return true
}

// budgetClusters describes the running clusters to parallelism.Divide.
func budgetClusters(running []*cluster) []parallelism.Cluster {
	out := make([]parallelism.Cluster, 0, len(running))
	for _, c := range running {
		b := parallelism.Cluster{Name: c.name, Remaining: c.inventoryDesired}
		if c.hasShard {
			b.Assigned = c.shard.parallelism
		}
		if r := c.reported; r != nil {
			// Desired counts only eligible nodes, so a pod whose node is gone (kept while
			// paused, or finished and not yet garbage-collected) may make this fall below
			// the pods still running: those count in full.
			b.Remaining = max(r.Desired-r.Succeeded-r.Failed, r.Active)
			b.Active = r.Active
			b.Applied = r.Parallelism
			if bcj.Finished(r) {
				b.Remaining = 0
			}
		}
		out = append(out, b)
	}
	return out
}

func failedDetail(s *musterv1.BroadcastJobStatus) string {
	if s == nil {
		return ""
	}
	if c := meta.FindStatusCondition(s.Conditions, musterv1.BroadcastJobFailed); c != nil && c.Status == metav1.ConditionTrue {
		return ": " + c.Message
	}
	return ""
}

// appliedCondition sets ShardsApplied on status from what the shards' agents reported: a
// shard the member refused would otherwise leave the job Pending with the cause only on
// a Work. It returns the condition when its failure is news against the job's status.
func appliedCondition(status *musterv1.BroadcastJobStatus, job *musterv1.BroadcastJob, running []*cluster) []metav1.Condition {
	var reports []shards.Report
	for _, c := range running {
		if c.hasShard {
			reports = append(reports, shards.Report{Where: "cluster " + c.name, Applied: c.applied, ApplyError: c.applyError})
		}
	}
	if len(reports) == 0 {
		return nil
	}
	prev := meta.FindStatusCondition(job.Status.Conditions, musterv1.BroadcastJobShardsApplied)
	cond, news := shards.AppliedCondition(musterv1.BroadcastJobShardsApplied, prev, reports, job.Generation)
	meta.SetStatusCondition(&status.Conditions, cond)
	if news {
		return []metav1.Condition{cond}
	}
	return nil
}

// withNameTaken changes plan for a job whose new shards cannot be created because taken,
// another object's Work, holds their name (no other job's shard does, but a Work can be
// made by hand): plan creates no new shard, its existing shards go on as planned, and
// ShardsApplied is False with reason ShardNameTaken, announced once. The job looks again
// after takenRetry, in case the name was freed.
func withNameTaken(p fleetPlan, job *musterv1.BroadcastJob, works map[string]*musterv1.Work, taken *musterv1.Work) fleetPlan {
	for cluster := range p.shards {
		if _, ok := works[cluster]; !ok {
			delete(p.shards, cluster)
		}
	}
	owner := "another object"
	if l := taken.Labels; l[musterv1.BroadcastJobNameLabel] != "" {
		owner = fmt.Sprintf("BroadcastJob %s/%s", l[musterv1.BroadcastJobNamespaceLabel], l[musterv1.BroadcastJobNameLabel])
	}
	cond := metav1.Condition{
		Type: musterv1.BroadcastJobShardsApplied, Status: metav1.ConditionFalse, Reason: musterv1.ReasonShardNameTaken, ObservedGeneration: job.Generation,
		Message: fmt.Sprintf("Work %s/%s, which would carry the shard, belongs to %s: delete that Work or rename this BroadcastJob",
			taken.Namespace, taken.Name, owner),
	}
	prev := meta.FindStatusCondition(job.Status.Conditions, musterv1.BroadcastJobShardsApplied)
	if prev != nil && prev.Status == cond.Status {
		// The plan may have set ShardsApplied from the shards first; keeping the stored
		// transition time makes an unchanged status compare equal, so a pass that only
		// finds the name still taken writes nothing (and triggers no further pass).
		cond.LastTransitionTime = prev.LastTransitionTime
	}
	p.status.Conditions = slices.Clone(p.status.Conditions)
	meta.SetStatusCondition(&p.status.Conditions, cond)
	// The ShardsApplied decided from the shards is replaced, so it is no news either.
	p.news = slices.DeleteFunc(slices.Clone(p.news), func(c metav1.Condition) bool { return c.Type == musterv1.BroadcastJobShardsApplied })
	if prev == nil || prev.Reason != musterv1.ReasonShardNameTaken {
		p.news = append(p.news, cond)
	}
	if p.requeueAfter == 0 || p.requeueAfter > takenRetry {
		p.requeueAfter = takenRetry
	}
	return p
}
