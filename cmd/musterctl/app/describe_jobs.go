package app

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	kubectldescribe "k8s.io/kubectl/pkg/describe"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

const (
	l0 = kubectldescribe.LEVEL_0
	l1 = kubectldescribe.LEVEL_1
	l2 = kubectldescribe.LEVEL_2
)

func describeFleetJob(w kubectldescribe.PrefixWriter, fj *musterv1.FleetJob, in *describeInput) {
	spec := &fj.Spec.Template.Spec
	w.Write(l0, "Placement:\t%s%s\n", fj.Spec.Placement.Mode, placementSummary(&fj.Spec.Placement.Placement))
	w.Write(l0, "Completions:\t%s\n", count(spec.Completions))
	w.Write(l0, "Parallelism:\t%s\n", count(spec.Parallelism))
	if spec.CompletionMode != nil {
		w.Write(l0, "Completion Mode:\t%s\n", *spec.CompletionMode)
	}
	w.Write(l0, "Shard Failure Policy:\t%s\n", fj.Spec.ShardFailurePolicy)
	s := &fj.Status
	w.Write(l0, "Phase:\t%s\n", orPending(string(s.Phase)))
	writeTimes(w, s.StartTime, s.CompletionTime, in.now)
	w.Write(l0, "Pods:\t%d active / %d succeeded / %d failed\n", s.Active, s.Succeeded, s.Failed)
	describeConditions(w, l0, "Conditions", s.Conditions, in.now)
	if len(s.Clusters) == 0 {
		w.Write(l0, "Clusters:\t<none>\n")
	} else {
		w.Write(l0, "Clusters:\n")
		w.Write(l1, "CLUSTER\tPHASE\tINDEXES\tCOMPLETIONS\tACTIVE\tSUCCEEDED\tFAILED\tCOMPLETED-INDEXES\n")
		for _, c := range s.Clusters {
			indexes := "-"
			if r := c.Indexes; r != nil {
				indexes = fmt.Sprintf("%d-%d", r.Start, r.End-1)
			}
			if c.Part != "" {
				indexes = "moved"
			}
			w.Write(l1, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n", shardName(c), orPending(string(c.Phase)), indexes, count(c.Completions), c.Active, c.Succeeded, c.Failed, orDash(c.CompletedIndexes))
		}
		w.Write(l1, "TOTAL\t%s\t-\t%s\t%d\t%d\t%d\t-\n", orPending(string(s.Phase)), count(spec.Completions), s.Active, s.Succeeded, s.Failed)
		describeOmitted(w, s.ClustersOmitted)
		evictions := make([]failover, 0, len(s.Clusters))
		for _, c := range s.Clusters {
			if c.Phase == musterv1.JobEvicted && c.Eviction != nil {
				evictions = append(evictions, failover{shardName(c), *c.Eviction})
			}
		}
		describeFailovers(w, evictions, in.now)
	}
	describeShards(w, in, func(raw []byte) {
		var js batchv1.JobStatus
		if err := json.Unmarshal(raw, &js); err != nil {
			w.Write(l2, "Job:\tunreadable status: %v\n", err)
			return
		}
		w.Write(l2, "Job:\t%d active / %d ready / %d succeeded / %d failed\n", js.Active, ptrOr(js.Ready), js.Succeeded, js.Failed)
		conds := make([]metav1.Condition, 0, len(js.Conditions))
		for _, c := range js.Conditions {
			conds = append(conds, metav1.Condition{Type: string(c.Type), Status: metav1.ConditionStatus(c.Status), Reason: c.Reason, Message: c.Message, LastTransitionTime: c.LastTransitionTime})
		}
		describeConditions(w, l2, "Job Conditions", conds, in.now)
	})
}

func describeBroadcastJob(w kubectldescribe.PrefixWriter, job *musterv1.BroadcastJob, in *describeInput) {
	if job.Spec.Placement != nil {
		w.Write(l0, "Placement:\t%s\n", placementSummary(job.Spec.Placement))
	}
	par := "all nodes"
	if job.Spec.Parallelism != nil {
		par = job.Spec.Parallelism.String()
	}
	w.Write(l0, "Parallelism:\t%s\n", par)
	w.Write(l0, "Paused:\t%t\n", job.Spec.Paused)
	s := &job.Status
	w.Write(l0, "Phase:\t%s\n", phaseOrPending(s.Phase))
	writeTimes(w, s.StartTime, s.CompletionTime, in.now)
	describeConditions(w, l0, "Conditions", s.Conditions, in.now)
	if len(s.Clusters) == 0 {
		w.Write(l0, "Clusters:\t<none>\n")
	} else {
		w.Write(l0, "Clusters:\n")
		w.Write(l1, "CLUSTER\tPHASE\tDESIRED\tACTIVE\tSUCCEEDED\tFAILED\tPARALLELISM\tPROGRESS\n")
		for _, c := range s.Clusters {
			broadcastRow(w, c.ClusterName, c.Phase, c.BroadcastCounts, c.Parallelism)
		}
		broadcastRow(w, "TOTAL", s.Phase, s.BroadcastCounts, s.Parallelism)
		describeOmitted(w, s.ClustersOmitted)
		evictions := make([]failover, 0, len(s.Clusters))
		for _, c := range s.Clusters {
			if c.Phase == musterv1.BroadcastJobEvicted && c.Eviction != nil {
				evictions = append(evictions, failover{c.ClusterName, *c.Eviction})
			}
		}
		describeFailovers(w, evictions, in.now)
	}
	describeShards(w, in, func(raw []byte) {
		var ms musterv1.BroadcastJobStatus
		if err := json.Unmarshal(raw, &ms); err != nil {
			w.Write(l2, "BroadcastJob:\tunreadable status: %v\n", err)
			return
		}
		w.Write(l2, "BroadcastJob:\t%s; %d desired / %d active / %d succeeded / %d failed\n", phaseOrPending(ms.Phase), ms.Desired, ms.Active, ms.Succeeded, ms.Failed)
		describeConditions(w, l2, "BroadcastJob Conditions", ms.Conditions, in.now)
	})
}

// describeShards writes each shard's Work and, through member, the member object's status
// that the agent fed back in the Work.
func describeShards(w kubectldescribe.PrefixWriter, in *describeInput, member func(status []byte)) {
	works, keys := worksByCluster(in.works)
	if len(keys) == 0 {
		w.Write(l0, "Shards:\t<none>\n")
		return
	}
	w.Write(l0, "Shards:\n")
	for _, k := range keys {
		work := works[k]
		w.Write(l1, "%s:\n", k)
		workDetail(w, work, in.now)
		if ms := work.Status.Manifests; len(ms) > 0 && ms[0].Status != nil && len(ms[0].Status.Raw) > 0 {
			member(ms[0].Status.Raw)
		} else {
			w.Write(l2, "Member Status:\tnot reported yet\n")
		}
	}
}

// describeOmitted says how many shards the status leaves out of its clusters (it lists
// at most MaxClusterStatuses); the totals count them.
func describeOmitted(w kubectldescribe.PrefixWriter, omitted int32) {
	if omitted > 0 {
		w.Write(l1, "(%d more shards, counted in the total: the status lists %d, failed and unfinished ones first; every shard is under Shards)\n", omitted, musterv1.MaxClusterStatuses)
	}
}

func broadcastRow(w kubectldescribe.PrefixWriter, name string, phase musterv1.BroadcastJobPhase, c musterv1.BroadcastCounts, parallelism *int32) {
	progress := "-"
	if c.Desired > 0 {
		progress = fmt.Sprintf("%d%%", 100*(c.Succeeded+c.Failed)/c.Desired)
	}
	w.Write(l1, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\n", name, phaseOrPending(phase), c.Desired, c.Active, c.Succeeded, c.Failed, count(parallelism), progress)
}

func placementSummary(p *musterv1.Placement) string {
	var parts []string
	if len(p.ClusterNames) > 0 {
		parts = append(parts, fmt.Sprintf("clusters %v", p.ClusterNames))
	}
	if p.ClusterSelector != nil {
		parts = append(parts, "selector "+metav1.FormatLabelSelector(p.ClusterSelector))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s)", joinComma(parts))
}

func writeTimes(w kubectldescribe.PrefixWriter, start, end *metav1.Time, now time.Time) {
	if start != nil {
		w.Write(l0, "Start Time:\t%s (%s ago)\n", start.UTC().Format(time.RFC3339), age(now, *start))
	}
	if end != nil && start != nil {
		w.Write(l0, "Completion Time:\t%s (took %s)\n", end.UTC().Format(time.RFC3339), duration.HumanDuration(end.Sub(start.Time)))
	}
}

// shardName names a FleetJob shard's row: its cluster, after its subset with a spread,
// and with the part it runs when it took over what an evicted shard left.
func shardName(c musterv1.ClusterJobStatus) string {
	name := c.ClusterName
	if c.Subset != "" {
		name = c.Subset + "@" + name
	}
	if c.Part != "" {
		name += " (part " + c.Part + ")"
	}
	return name
}

// failover is an evicted shard, by the name of its row.
type failover struct {
	shard    string
	eviction musterv1.ShardEviction
}

// describeFailovers writes the evictions a status keeps (the latest few), oldest first.
func describeFailovers(w kubectldescribe.PrefixWriter, evictions []failover, now time.Time) {
	if len(evictions) == 0 {
		return
	}
	slices.SortStableFunc(evictions, func(a, b failover) int { return a.eviction.Time.Compare(b.eviction.Time.Time) })
	w.Write(l0, "Failovers:\n")
	w.Write(l1, "AGE\tCLUSTER\tREASON\tMESSAGE\n")
	for _, e := range evictions {
		w.Write(l1, "%s\t%s\t%s\t%s\n", age(now, e.eviction.Time), e.shard, e.eviction.Reason, e.eviction.Message)
	}
}
