package dashboard

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cronapi "github.com/musterhq/muster/api/cronjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// hubObjects is what the dashboard reads from the hub.
type hubObjects struct {
	Clusters      []musterv1.MemberCluster
	FleetJobs     []musterv1.FleetJob
	BroadcastJobs []musterv1.BroadcastJob
	Crons         []musterv1.FleetCronJob
}

// assemble turns the hub's objects into the page's view at now: clusters by name, jobs and
// crons by namespace and name.
func assemble(hub hubObjects, now time.Time) Fleet {
	f := Fleet{Generated: now, Clusters: []Cluster{}, Jobs: []Job{}, Crons: []Cron{}}
	for i := range hub.Clusters {
		f.Clusters = append(f.Clusters, clusterView(&hub.Clusters[i]))
	}
	for i := range hub.FleetJobs {
		f.Jobs = append(f.Jobs, fleetJobView(&hub.FleetJobs[i]))
	}
	for i := range hub.BroadcastJobs {
		f.Jobs = append(f.Jobs, broadcastJobView(&hub.BroadcastJobs[i]))
	}
	for i := range hub.Crons {
		f.Crons = append(f.Crons, cronView(&hub.Crons[i], now))
	}
	slices.SortFunc(f.Clusters, func(a, b Cluster) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(f.Jobs, func(a, b Job) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Kind, b.Kind))
	})
	slices.SortFunc(f.Crons, func(a, b Cron) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return f
}

func clusterView(mc *musterv1.MemberCluster) Cluster {
	c := Cluster{Name: mc.Name, Accepted: mc.Spec.Accepted, Health: "Unknown", Version: mc.Status.Version}
	if n := mc.Status.Nodes; n != nil {
		c.NodesReady, c.NodesTotal = n.Ready, n.Total
	}
	for _, t := range mc.Spec.Taints {
		c.Taints = append(c.Taints, taintString(t))
	}
	switch cond := meta.FindStatusCondition(mc.Status.Conditions, musterv1.MemberClusterAvailable); {
	case !mc.Spec.Accepted:
		c.Health = "NotAccepted"
	case cond == nil:
	case cond.Status == metav1.ConditionTrue:
		c.Health = "Available"
	case cond.Status == metav1.ConditionFalse:
		c.Health, c.Message = "Unavailable", cond.Message
	default:
		c.Message = cond.Message
	}
	return c
}

// taintString writes a taint as kubectl taint takes it: key[=value]:Effect.
func taintString(t corev1.Taint) string {
	if t.Value == "" {
		return fmt.Sprintf("%s:%s", t.Key, t.Effect)
	}
	return fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect)
}

func fleetJobView(fj *musterv1.FleetJob) Job {
	s := &fj.Status
	j := Job{Kind: "FleetJob", Namespace: fj.Namespace, Name: fj.Name, Phase: orPending(string(s.Phase)), Clusters: []ClusterProgress{}}
	// The fleet's total is what its shards were given (a Duplicate job runs every
	// completion in every cluster); before placement, the template's.
	// An evicted shard no longer counts; the pods it had seen succeed stay counted
	// with the part that took over (carried).
	var total int32
	for _, c := range s.Clusters {
		name := c.ClusterName
		if c.Subset != "" {
			name = c.Subset + "@" + c.ClusterName
		}
		if c.Part != "" {
			name += " (part " + c.Part + ")"
		}
		want := ptr.Deref(c.Completions, 0)
		if c.Phase != musterv1.JobEvicted {
			total += want + c.Carried
		}
		j.Clusters = append(j.Clusters, ClusterProgress{Cluster: name, Phase: orPending(string(c.Phase)),
			Progress: progress(c.Succeeded, want, c.Active, c.Succeeded, c.Failed)})
	}
	if len(s.Clusters) == 0 {
		total = ptr.Deref(fj.Spec.Template.Spec.Completions, 0)
	}
	// A status that leaves shards out of its list gives the fleet's total in progress
	// ("<succeeded>/<completions>"), over every shard.
	if _, whole, ok := strings.Cut(s.Progress, "/"); ok && s.ClustersOmitted > 0 {
		if n, err := strconv.ParseInt(whole, 10, 32); err == nil {
			total = int32(n)
		}
	}
	j.Progress = progress(s.Succeeded, total, s.Active, s.Succeeded, s.Failed)
	j.Message = firstMessage(s.Conditions, []string{musterv1.FleetJobFailed, musterv1.FleetJobComplete}, []string{musterv1.FleetJobScheduled, musterv1.FleetJobShardsApplied, musterv1.FleetJobPodsSchedulable})
	return j
}

func broadcastJobView(bj *musterv1.BroadcastJob) Job {
	s := &bj.Status
	j := Job{Kind: "BroadcastJob", Namespace: bj.Namespace, Name: bj.Name, Phase: orPending(string(s.Phase)), Clusters: []ClusterProgress{}}
	for _, c := range s.Clusters {
		j.Clusters = append(j.Clusters, ClusterProgress{Cluster: c.ClusterName, Phase: orPending(string(c.Phase)), Progress: broadcastProgress(c.BroadcastCounts)})
	}
	j.Progress = broadcastProgress(s.BroadcastCounts)
	j.Message = firstMessage(s.Conditions, []string{musterv1.BroadcastJobFailed, musterv1.BroadcastJobComplete, musterv1.BroadcastJobPaused}, []string{musterv1.BroadcastJobNodesEligible, musterv1.BroadcastJobShardsApplied})
	return j
}

// broadcastProgress counts every finished pod, succeeded or failed: each node runs one.
func broadcastProgress(c musterv1.BroadcastCounts) Progress {
	return progress(c.Succeeded+c.Failed, c.Desired, c.Active, c.Succeeded, c.Failed)
}

func progress(done, total, active, succeeded, failed int32) Progress {
	p := Progress{Done: done, Total: total, Active: active, Succeeded: succeeded, Failed: failed}
	if total > 0 {
		p.Percent = min(100, int32(int64(done)*100/int64(total)))
	}
	return p
}

// firstMessage is the message of the first condition of whenTrue that is True, else of the
// first of whenFalse that is False: what ended the job, or what holds it back.
func firstMessage(conds []metav1.Condition, whenTrue, whenFalse []string) string {
	for _, t := range whenTrue {
		if c := meta.FindStatusCondition(conds, t); c != nil && c.Status == metav1.ConditionTrue {
			return c.Message
		}
	}
	for _, t := range whenFalse {
		if c := meta.FindStatusCondition(conds, t); c != nil && c.Status == metav1.ConditionFalse {
			return c.Message
		}
	}
	return ""
}

func cronView(cj *musterv1.FleetCronJob, now time.Time) Cron {
	c := Cron{Namespace: cj.Namespace, Name: cj.Name, Schedule: cj.Spec.Schedule, TimeZone: ptr.Deref(cj.Spec.TimeZone, ""),
		Creates: "FleetJob", Suspended: ptr.Deref(cj.Spec.Suspend, false), Active: len(cj.Status.Active),
		LastRun: timeOf(cj.Status.LastScheduleTime), LastSuccess: timeOf(cj.Status.LastSuccessfulTime)}
	if cj.Spec.JobTemplate == nil && cj.Spec.BroadcastJobTemplate != nil {
		c.Creates = "BroadcastJob"
	}
	// The hub's own parser: the dashboard shows the slot the controller will fire at.
	sched, err := cronapi.Parse(cj.Spec.Schedule, c.TimeZone)
	switch {
	case err != nil:
		c.Problem = err.Error()
	case !c.Suspended:
		if next := sched.Next(now); !next.IsZero() {
			c.NextRun = &next
		}
	}
	return c
}

func timeOf(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	return &t.Time
}

func orPending(phase string) string {
	if phase == "" {
		return "Pending"
	}
	return phase
}
