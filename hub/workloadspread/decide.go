package workloadspread

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/api/workloadspread"
	"github.com/musterhq/muster/hub/shards"
	"github.com/musterhq/muster/internal/patch"
	"github.com/musterhq/muster/placement/subsets"
)

// shard is what the spread's status reads of one shard of its FleetJob: its subset
// (empty for a shard placed without a spread), cluster and replicas, and the Job status
// its agent reported (nil before the first report).
type shard struct {
	subset, cluster string
	parallelism     int32
	status          *batchv1.JobStatus
}

func (s shard) describe() string { return fmt.Sprintf("subset %s in cluster %s", s.subset, s.cluster) }

// snapshot is what one round knows of a spread's world: its target FleetJob (nil when
// there is none) and the target's shards that are not being removed.
type snapshot struct {
	fj     *musterv1.FleetJob
	shards []shard
}

// places says the spread places its target: the target exists and has not finished, and
// none of its shards was placed without a spread (those stay as they are, as OpenKruise's
// spread only shapes pods made after it, and the spread reports nothing). The Scheduled
// condition of a placement without a spread says the same before its Works are seen.
func (s *snapshot) places() bool {
	if s.fj == nil {
		return false
	}
	conds := s.fj.Status.Conditions
	if meta.IsStatusConditionTrue(conds, musterv1.FleetJobComplete) || meta.IsStatusConditionTrue(conds, musterv1.FleetJobFailed) {
		return false
	}
	if c := meta.FindStatusCondition(conds, musterv1.FleetJobScheduled); c != nil && c.Status == metav1.ConditionTrue && c.Reason == musterv1.FleetJobReasonPlaced {
		return false
	}
	return !slices.ContainsFunc(s.shards, func(sh shard) bool { return sh.subset == "" })
}

// decision is the status a round writes, and when a subset's condition may change with
// time alone (zero: never).
type decision struct {
	status  musterv1.WorkloadSpreadStatus
	requeue time.Duration
}

// decide reports each subset of ws: the replicas its shards run in each cluster, the
// room left under its cap (a percent resolves against the FleetJob's parallelism), and
// its Schedulable condition, decided from the condition stored before and the pods its
// shards report waiting (workloadspread.Schedulable).
func decide(ws *musterv1.WorkloadSpread, snap *snapshot, strategy workloadspread.Strategy, now time.Time) decision {
	total := max(ptr.Deref(snap.fj.Spec.Template.Spec.Parallelism, 1), 0)
	d := decision{status: musterv1.WorkloadSpreadStatus{ObservedGeneration: ws.Generation}}
	caps := make([]int32, len(ws.Spec.Subsets))
	for i := range ws.Spec.Subsets {
		spec := &ws.Spec.Subsets[i]
		caps[i] = subsets.Cap(spec.MaxReplicas, total)
		st, wake := subsetStatus(spec.Name, caps[i], storedCondition(&ws.Status, spec.Name), snap.shards, strategy, now)
		d.requeue = patch.Soonest(d.requeue, wake)
		d.status.Subsets = append(d.status.Subsets, st)
		d.status.Replicas += st.Replicas
	}
	d.status.SubsetReplicas = workloadspread.SubsetSummary(d.status.Subsets, caps)
	return d
}

// subsetStatus is one subset's status from its shards among all: replicas per cluster
// (in cluster order), room under limit (negative: unbounded, reported as -1) and the
// Schedulable condition, with when it may change.
func subsetStatus(name string, limit int32, stored *metav1.Condition, all []shard, strategy workloadspread.Strategy, now time.Time) (musterv1.WorkloadSpreadSubsetStatus, time.Duration) {
	st := musterv1.WorkloadSpreadSubsetStatus{Name: name, MissingReplicas: -1}
	mine := slices.DeleteFunc(slices.Clone(all), func(s shard) bool { return s.subset != name })
	slices.SortFunc(mine, func(a, b shard) int { return cmp.Compare(a.cluster, b.cluster) })
	in := make([]workloadspread.Shard, len(mine))
	for i, s := range mine {
		in[i] = workloadspread.Shard{Describe: s.describe(), Status: s.status}
		st.Replicas += s.parallelism
		if s.parallelism > 0 {
			st.Clusters = append(st.Clusters, musterv1.SubsetClusterStatus{ClusterName: s.cluster, Replicas: s.parallelism})
		}
	}
	// Bounded whatever the fleet's size: the largest shares stay listed.
	clusters, omitted := shards.Bounded(st.Clusters, musterv1.MaxSubsetClusterStatuses, func(c musterv1.SubsetClusterStatus) int { return -int(c.Replicas) })
	st.Clusters, st.ClustersOmitted = clusters, int32(omitted)
	if limit >= 0 {
		st.MissingReplicas = max(limit-st.Replicas, 0)
	}
	c, wake := workloadspread.Schedulable(stored, in, strategy, now)
	meta.SetStatusCondition(&st.Conditions, c)
	return st, wake
}

func storedCondition(status *musterv1.WorkloadSpreadStatus, subset string) *metav1.Condition {
	for i := range status.Subsets {
		if status.Subsets[i].Name == subset {
			return meta.FindStatusCondition(status.Subsets[i].Conditions, musterv1.SubsetSchedulable)
		}
	}
	return nil
}

// event is one event about the spread.
type event struct {
	eventType, reason, note string
}

// schedulableNews are the events a status change from before to after makes: a subset
// that turns Schedulable=False, and one tried again after it was False.
func schedulableNews(before *musterv1.WorkloadSpreadStatus, after musterv1.WorkloadSpreadStatus) []event {
	var out []event
	for _, st := range after.Subsets {
		now := meta.FindStatusCondition(st.Conditions, musterv1.SubsetSchedulable)
		was := storedCondition(before, st.Name)
		switch {
		case now == nil || (was != nil && was.Status == now.Status):
		case now.Status == metav1.ConditionFalse:
			out = append(out, event{corev1.EventTypeWarning, now.Reason, fmt.Sprintf("subset %s: %s", st.Name, now.Message)})
		case was != nil:
			out = append(out, event{corev1.EventTypeNormal, now.Reason, fmt.Sprintf("subset %s is tried again", st.Name)})
		}
	}
	return out
}
