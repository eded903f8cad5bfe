package broadcastjob

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	bcj "github.com/musterhq/muster/api/broadcastjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	hubmetrics "github.com/musterhq/muster/hub/metrics"
	"github.com/musterhq/muster/placement/clusters"
)

// maxEvicted is how many evicted shards a job's status keeps, the latest.
const maxEvicted = 8

// heldRecheck is how soon an eviction held by the disruption gate is looked at again.
const heldRecheck = 30 * time.Second

// moved is what failover did in a round: the events to announce once the status that
// records it is written, how many shards it evicted, and when to look again.
type moved struct {
	events  []failoverEvent
	evicted int
	requeue time.Duration
}

type failoverEvent struct{ eventType, reason, note string }

// withdrawnShard says whether the job's status records the eviction of the shard in Work
// uid, or that Work is already being removed: the cluster no longer runs the job, and a
// new shard there waits until the Work is gone.
func withdrawnShard(status *musterv1.BroadcastJobStatus, w *musterv1.Work) bool {
	if w.DeletionTimestamp != nil {
		return true
	}
	return slices.ContainsFunc(status.Clusters, func(c musterv1.ClusterBroadcastStatus) bool {
		return c.Phase == musterv1.BroadcastJobEvicted && c.Eviction != nil && c.Eviction.WorkUID != "" && c.Eviction.WorkUID == w.UID
	})
}

// dueEvictions returns the clusters whose shard must leave at now under their NoExecute
// taints, with why, and when the next pending one falls due (zero: none). A shard that
// finished stays: its counts are final.
func dueEvictions(job *musterv1.BroadcastJob, cs []cluster, members map[string]*musterv1.MemberCluster, p clusters.EvictionPolicy, now time.Time) (map[string]clusters.Eviction, time.Time) {
	due := map[string]clusters.Eviction{}
	var next time.Time
	for _, c := range cs {
		mc := members[c.name]
		if !c.hasShard || c.withdrawn || mc == nil || (c.reported != nil && bcj.Finished(c.reported)) {
			continue
		}
		e := p.EvictAt(job.Spec.Placement.Tolerations, mc.Spec.Taints)
		switch {
		case e.At.IsZero():
		case e.Due(now):
			due[c.name] = e
		case next.IsZero() || e.At.Before(next):
			next = e.At
		}
	}
	return due, next
}

// evictedEntries are the status entries of the shards evicted before, followed by those
// evicted in this round, the latest maxEvicted: a shard's last counts, which no longer
// add to the job's, and why it left. The list is keyed by cluster, so a cluster holds one
// entry: its live one (live) once it runs a shard again, else its latest eviction.
func evictedEntries(prev []musterv1.ClusterBroadcastStatus, cs []cluster, live map[string]bool) []musterv1.ClusterBroadcastStatus {
	var out []musterv1.ClusterBroadcastStatus
	for _, c := range prev {
		if c.Phase == musterv1.BroadcastJobEvicted && !live[c.ClusterName] {
			out = append(out, c)
		}
	}
	for _, c := range cs {
		if c.evicted == nil {
			continue
		}
		out = slices.DeleteFunc(out, func(e musterv1.ClusterBroadcastStatus) bool { return e.ClusterName == c.name })
		entry := musterv1.ClusterBroadcastStatus{ClusterName: c.name, Parallelism: c.shard.parallelism, Phase: musterv1.BroadcastJobEvicted, Eviction: c.evicted}
		if c.reported != nil {
			entry.BroadcastCounts = c.reported.BroadcastCounts
		}
		out = append(out, entry)
	}
	return out[max(0, len(out)-maxEvicted):]
}

// withdraw deletes the Works of the shards whose eviction the job's status records, also
// once the job has finished (a job may complete in the round that evicted a shard), and
// returns the clusters whose shard is withdrawn or being removed.
func (r *Reconciler) withdraw(ctx context.Context, job *musterv1.BroadcastJob, works map[string]*musterv1.Work) (map[string]bool, error) {
	out := map[string]bool{}
	for name, w := range works {
		if !withdrawnShard(&job.Status, w) {
			continue
		}
		out[name] = true
		if w.DeletionTimestamp != nil {
			continue
		}
		if err := r.Client.Delete(ctx, w, client.Preconditions{UID: &w.UID}); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("withdrawing the evicted shard in cluster %s: %w", name, err)
		}
		log.FromContext(ctx).V(2).Info("withdrew an evicted shard of the BroadcastJob", "cluster", name)
	}
	return out, nil
}

// failover takes the shards off clusters the job may no longer stay on, in two rounds so
// that no eviction is lost: the round that finds a shard due marks it evicted, which the
// status it writes records (its nodes stop counting as desired, so the job can complete
// on the rest); a later round, finding the eviction recorded, deletes the shard's Work.
// Nothing moves while most of the clusters the placement selects are unreachable at once,
// nor beyond the eviction rate.
func (r *Reconciler) failover(ctx context.Context, o *fleetObserved, works map[string]*musterv1.Work, withdrawn map[string]bool) moved {
	var out moved
	job := o.job
	for i := range o.clusters {
		c := &o.clusters[i]
		c.withdrawn = c.hasShard && withdrawn[c.name]
	}
	if r.Failover == nil {
		return out
	}
	members := make(map[string]*musterv1.MemberCluster, len(o.members))
	for i := range o.members {
		members[o.members[i].Name] = &o.members[i]
	}
	due, next := dueEvictions(job, o.clusters, members, r.Failover.Policy(), o.now)
	if !next.IsZero() {
		out.requeue = next.Sub(o.now) + time.Second
	}
	if len(due) == 0 {
		return out
	}
	if !r.Failover.Ready() {
		out.requeue = r.Failover.RetryAfter()
		return out
	}
	names := slices.Sorted(maps.Keys(due))
	if held, down, of := r.Failover.Disrupted(job.Spec.Placement, o.members); held {
		log.FromContext(ctx).V(2).Info("eviction held by the disruption gate", "clusters", names, "unreachable", down, "selected", of)
		hubmetrics.FailoversHeld.WithLabelValues("BroadcastJob").Inc()
		out.events = append(out.events, failoverEvent{corev1.EventTypeWarning, musterv1.BroadcastJobReasonFailoverHeld, fmt.Sprintf(
			"not taking the shards off %s: %d of the %d clusters the placement selects are unreachable, more than %.0f%%, so the hub may be the one cut off",
			clusters.Names(names), down, of, 100*r.Failover.Threshold)})
		out.requeue = heldRecheck
		return out
	}
	for i := range o.clusters {
		c := &o.clusters[i]
		e, ok := due[c.name]
		if !ok {
			continue
		}
		if !r.Failover.Take() {
			out.requeue = r.Failover.RetryAfter()
			break
		}
		log.FromContext(ctx).Info("evicting a shard of the BroadcastJob", "cluster", c.name, "taint", e.Taint.ToString())
		c.evicted = &musterv1.ShardEviction{Time: metav1.Time{Time: o.now}, Reason: musterv1.BroadcastJobReasonShardEvicted, Message: e.Describe(), WorkUID: works[c.name].UID}
		out.evicted++
		out.events = append(out.events, failoverEvent{corev1.EventTypeWarning, musterv1.BroadcastJobReasonFailedOver,
			fmt.Sprintf("dropped the shard in cluster %s from the job: its nodes no longer count: %s", c.name, e.Describe())})
	}
	if out.evicted > 0 {
		// The next round deletes the Works, once the status records their eviction.
		out.requeue = time.Second
	}
	return out
}
