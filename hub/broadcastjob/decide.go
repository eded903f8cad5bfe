package broadcastjob

import (
	"fmt"
	"math"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bcj "github.com/musterhq/muster/api/broadcastjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/shards"
	"github.com/musterhq/muster/placement/parallelism"
)

// maxDeadlineSeconds is the longest activeDeadlineSeconds a time.Duration can hold.
const maxDeadlineSeconds = int64(math.MaxInt64 / time.Second)

// ReasonNoPlacement is the NodesEligible reason of a hub BroadcastJob without placement.
const ReasonNoPlacement = "NoPlacement"

// ReasonShardNameTaken is the ShardsApplied reason of a hub BroadcastJob whose shard's
// Work name another object's Work holds.
const ReasonShardNameTaken = "ShardNameTaken"

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
	bcj.SetCondition(&status, musterv1.BroadcastJobNodesEligible, metav1.ConditionFalse, ReasonNoPlacement,
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
}

type fleetObserved struct {
	job      *musterv1.BroadcastJob
	clusters []cluster
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

// decideFleet computes the fleet-wide plan for a hub job that has not finished.
func decideFleet(o fleetObserved) fleetPlan {
	job := o.job
	status := *job.Status.DeepCopy()
	status.ObservedGeneration = job.Generation
	if status.StartTime == nil {
		status.StartTime = &metav1.Time{Time: o.now}
	}
	var totals musterv1.BroadcastCounts
	status.Clusters = nil
	var firstFailed *cluster
	var running []*cluster
	for i := range o.clusters {
		c := &o.clusters[i]
		if !c.hasShard && !c.eligible {
			continue
		}
		running = append(running, c)
		counts := musterv1.BroadcastCounts{Desired: c.inventoryDesired}
		entry := musterv1.ClusterBroadcastStatus{ClusterName: c.name, Parallelism: c.shard.parallelism, Phase: musterv1.BroadcastJobPending}
		if c.reported != nil {
			counts = c.reported.BroadcastCounts
			entry.Phase = c.reported.Phase
		}
		entry.BroadcastCounts = counts
		status.Clusters = append(status.Clusters, entry)
		totals.Desired += counts.Desired
		totals.Active += counts.Active
		totals.Succeeded += counts.Succeeded
		totals.Failed += counts.Failed
		if counts.Failed > 0 && firstFailed == nil {
			firstFailed = c
		}
	}
	status.BroadcastCounts = totals
	budget := parallelism.Resolve(job.Spec.Parallelism, totals.Desired)
	status.Parallelism = budget

	p := fleetPlan{shards: map[string]shardSpec{}, news: appliedCondition(&status, job, running)}
	finish := func(condition, reason, message string) fleetPlan {
		for _, c := range running {
			s := c.shard
			if c.hasShard && !(c.reported != nil && bcj.Finished(c.reported)) {
				s.terminate = message
			}
			if c.hasShard {
				p.shards[c.name] = s
			}
		}
		if reason != bcj.ReasonCompleted {
			status.Active = 0
		}
		status.CompletionTime = &metav1.Time{Time: o.now}
		bcj.SetCondition(&status, condition, metav1.ConditionTrue, reason, message)
		bcj.SetCondition(&status, musterv1.BroadcastJobPaused, metav1.ConditionFalse, reason, "the job finished")
		status.Phase = bcj.Phase(&status)
		p.status = status
		return p
	}
	policy := bcj.FailurePolicy(&job.Spec)
	if policy == musterv1.FailureFailFast && firstFailed != nil {
		return finish(musterv1.BroadcastJobFailed, bcj.ReasonPodFailed, fmt.Sprintf("a pod failed in cluster %s (failurePolicy FailFast)%s", firstFailed.name, failedDetail(firstFailed.reported)))
	}
	// A deadline beyond what a Duration holds is never reached: converting it would
	// wrap into the past and fail the job at once.
	if d := job.Spec.CompletionPolicy.ActiveDeadlineSeconds; d != nil && *d <= maxDeadlineSeconds {
		deadline := status.StartTime.Add(time.Duration(*d) * time.Second)
		if !o.now.Before(deadline) {
			return finish(musterv1.BroadcastJobFailed, bcj.ReasonDeadlineExceeded, fmt.Sprintf("the job ran longer than activeDeadlineSeconds (%ds)", *d))
		}
		p.requeueAfter = deadline.Sub(o.now)
	}
	if job.Spec.CompletionPolicy.Type != musterv1.CompletionNever && fleetDone(running, totals) {
		if totals.Failed > 0 {
			return finish(musterv1.BroadcastJobFailed, bcj.ReasonPodsFailed, fmt.Sprintf("%d of %d pods failed across %d clusters", totals.Failed, totals.Succeeded+totals.Failed, len(running)))
		}
		return finish(musterv1.BroadcastJobComplete, bcj.ReasonCompleted, fmt.Sprintf("%d pods succeeded across %d clusters", totals.Succeeded, len(running)))
	}

	paused := job.Spec.Paused
	if policy == musterv1.FailurePause && !paused && totals.Failed > bcj.PausedAt(job) {
		p.pause = true
		paused = true
	}
	var shares map[string]int32
	if budget != nil {
		shares = parallelism.Divide(*budget, budgetClusters(running))
	}
	for _, c := range running {
		s := shardSpec{paused: paused}
		if shares != nil {
			v := shares[c.name]
			s.parallelism = &v
		}
		p.shards[c.name] = s
	}
	for i := range status.Clusters {
		if s, ok := p.shards[status.Clusters[i].ClusterName]; ok {
			status.Clusters[i].Parallelism = s.parallelism
		}
	}
	if paused {
		failure := ""
		if p.pause {
			failure = fmt.Sprintf("a pod failed in cluster %s (failurePolicy Pause)", firstFailed.name)
		}
		reason, msg := bcj.PausedReason(&job.Status, p.pause, failure)
		bcj.SetCondition(&status, musterv1.BroadcastJobPaused, metav1.ConditionTrue, reason, msg)
	} else {
		bcj.SetCondition(&status, musterv1.BroadcastJobPaused, metav1.ConditionFalse, bcj.ReasonNotPaused, "the job creates pods")
	}
	switch {
	case len(running) == 0:
		bcj.SetCondition(&status, musterv1.BroadcastJobNodesEligible, metav1.ConditionFalse, bcj.ReasonNoEligibleClusters, noEligibleClusters(o.excluded))
	case totals.Desired == 0:
		bcj.SetCondition(&status, musterv1.BroadcastJobNodesEligible, metav1.ConditionFalse, bcj.ReasonNoEligibleNodes,
			"no node fits the pod template in "+clusterNames(running))
	default:
		bcj.SetCondition(&status, musterv1.BroadcastJobNodesEligible, metav1.ConditionTrue, bcj.ReasonNodesEligible,
			nodesEligibleMessage(totals.Desired, len(running)))
	}
	status.Phase = bcj.Phase(&status)
	p.status = status
	return p
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
// another object's Work, holds their name (names joined from parts repeat: namespace
// "a-b" with job "c", and namespace "a" with job "b-c"): plan creates no new shard, its
// existing shards go on as planned, and ShardsApplied is False with reason
// ShardNameTaken, announced once. The job looks again after takenRetry, in case the name
// was freed.
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
		Type: musterv1.BroadcastJobShardsApplied, Status: metav1.ConditionFalse, Reason: ReasonShardNameTaken, ObservedGeneration: job.Generation,
		Message: fmt.Sprintf("Work %s/%s, which would carry the shard, belongs to %s: rename this BroadcastJob (a shard's Work is named broadcastjob-<namespace>-<name>)",
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
	if prev == nil || prev.Reason != ReasonShardNameTaken {
		p.news = append(p.news, cond)
	}
	if p.requeueAfter == 0 || p.requeueAfter > takenRetry {
		p.requeueAfter = takenRetry
	}
	return p
}
