package cronjob

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bcj "github.com/musterhq/muster/api/broadcastjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// child is a FleetJob or BroadcastJob a FleetCronJob created.
type child struct {
	obj client.Object
	// scheduled is the slot the child ran for, from its annotation (slotKnown), else its
	// creation time.
	scheduled time.Time
	slotKnown bool
	finished  bool
	succeeded bool
	completed *metav1.Time
	// lost: failover evicted the run from every member cluster and none can take it; it
	// counts as finished, not succeeded.
	lost bool
}

func newChild(cj *musterv1.FleetCronJob, name string, slot time.Time) client.Object {
	var obj client.Object
	var meta metav1.ObjectMeta
	if t := cj.Spec.JobTemplate; t != nil {
		meta = *t.ObjectMeta.DeepCopy()
		obj = &musterv1.FleetJob{Spec: *t.Spec.DeepCopy()}
	} else {
		t := cj.Spec.BroadcastJobTemplate
		meta = *t.ObjectMeta.DeepCopy()
		obj = &musterv1.BroadcastJob{Spec: *t.Spec.DeepCopy()}
	}
	obj.SetName(name)
	obj.SetNamespace(cj.Namespace)
	obj.SetLabels(meta.Labels)
	annotations := meta.Annotations
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[musterv1.ScheduledTimeAnnotation] = slot.UTC().Format(time.RFC3339)
	obj.SetAnnotations(annotations)
	obj.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(cj, musterv1.GroupVersion.WithKind("FleetCronJob"))})
	return obj
}

func reference(obj client.Object) corev1.ObjectReference {
	kind := "FleetJob"
	if _, ok := obj.(*musterv1.BroadcastJob); ok {
		kind = "BroadcastJob"
	}
	return corev1.ObjectReference{APIVersion: musterv1.GroupVersion.String(), Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID()}
}

// children lists the FleetJobs and BroadcastJobs the cron owns, oldest slot first.
func (r *Reconciler) children(ctx context.Context, cj *musterv1.FleetCronJob) ([]child, error) {
	var out []child
	owned := []client.ListOption{client.InNamespace(cj.Namespace), client.MatchingFields{ownerIndex: string(cj.UID)}}
	var fjs musterv1.FleetJobList
	if err := r.Client.List(ctx, &fjs, owned...); err != nil {
		return nil, fmt.Errorf("listing FleetJobs: %w", err)
	}
	for i := range fjs.Items {
		fj := &fjs.Items[i]
		if !metav1.IsControlledBy(fj, cj) {
			continue
		}
		complete := meta.IsStatusConditionTrue(fj.Status.Conditions, musterv1.FleetJobComplete)
		failed := meta.IsStatusConditionTrue(fj.Status.Conditions, musterv1.FleetJobFailed)
		slot, known := scheduledTime(fj)
		lost := fleetJobLost(&fj.Status)
		out = append(out, child{obj: fj, scheduled: slot, slotKnown: known, finished: complete || failed || lost, succeeded: complete, completed: fj.Status.CompletionTime, lost: lost})
	}
	var bcjs musterv1.BroadcastJobList
	if err := r.Client.List(ctx, &bcjs, owned...); err != nil {
		return nil, fmt.Errorf("listing BroadcastJobs: %w", err)
	}
	for i := range bcjs.Items {
		b := &bcjs.Items[i]
		if !metav1.IsControlledBy(b, cj) {
			continue
		}
		complete := meta.IsStatusConditionTrue(b.Status.Conditions, musterv1.BroadcastJobComplete)
		slot, known := scheduledTime(b)
		lost := broadcastJobLost(&b.Status)
		out = append(out, child{obj: b, scheduled: slot, slotKnown: known, finished: bcj.Finished(&b.Status) || lost, succeeded: complete, completed: b.Status.CompletionTime, lost: lost})
	}
	slices.SortFunc(out, func(a, b child) int {
		return cmp.Or(a.scheduled.Compare(b.scheduled), cmp.Compare(a.obj.GetName(), b.obj.GetName()))
	})
	return out, nil
}

// fleetJobLost says whether failover took a FleetJob off every cluster it ran in and no
// cluster could take it since: it has not finished, every shard its status lists was
// evicted, and its placement found no eligible cluster. A job just evicted and about to
// be placed again is not lost (its Scheduled reason is ShardEvicted until it is tried).
func fleetJobLost(s *musterv1.FleetJobStatus) bool {
	if meta.IsStatusConditionTrue(s.Conditions, musterv1.FleetJobComplete) || meta.IsStatusConditionTrue(s.Conditions, musterv1.FleetJobFailed) {
		return false
	}
	c := meta.FindStatusCondition(s.Conditions, musterv1.FleetJobScheduled)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != musterv1.ReasonNoEligibleClusters {
		return false
	}
	return len(s.Clusters) > 0 && !slices.ContainsFunc(s.Clusters, func(c musterv1.ClusterJobStatus) bool { return c.Phase != musterv1.JobEvicted })
}

// broadcastJobLost is fleetJobLost for a BroadcastJob: every shard its status lists was
// evicted and no cluster is eligible for it.
func broadcastJobLost(s *musterv1.BroadcastJobStatus) bool {
	if bcj.Finished(s) {
		return false
	}
	c := meta.FindStatusCondition(s.Conditions, musterv1.BroadcastJobNodesEligible)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != musterv1.ReasonNoEligibleClusters {
		return false
	}
	return len(s.Clusters) > 0 && !slices.ContainsFunc(s.Clusters, func(c musterv1.ClusterBroadcastStatus) bool { return c.Phase != musterv1.BroadcastJobEvicted })
}

// lostRuns splits children into the lost runs still to delete and the others (a lost run
// being deleted stays with them, finished, and is not deleted again).
func lostRuns(cj *musterv1.FleetCronJob, children []child) (lost, rest []child) {
	for _, c := range children {
		// A run whose slot the stored status does not record yet is its slot's only
		// record: it goes once the status says the slot ran (see beyondHistory).
		if c.lost && c.obj.GetDeletionTimestamp() == nil && slotRecorded(cj, c) {
			lost = append(lost, c)
		} else {
			rest = append(rest, c)
		}
	}
	return lost, rest
}

func scheduledTime(o client.Object) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339, o.GetAnnotations()[musterv1.ScheduledTimeAnnotation])
	if err != nil {
		return o.GetCreationTimestamp().Time, false
	}
	return t, true
}

func activeChildren(children []child) []child {
	var out []child
	for _, c := range children {
		if !c.finished && c.obj.GetDeletionTimestamp() == nil {
			out = append(out, c)
		}
	}
	return out
}

// childKind is the kind of the runs cj creates.
func childKind(cj *musterv1.FleetCronJob) string {
	if cj.Spec.JobTemplate != nil {
		return "FleetJob"
	}
	return "BroadcastJob"
}
