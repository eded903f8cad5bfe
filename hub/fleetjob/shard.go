package fleetjob

import (
	"fmt"
	"math"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/musterhq/muster/api/indexset"
	"github.com/musterhq/muster/api/names"
	"github.com/musterhq/muster/api/templates"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/shards"
)

// shard is one cluster's part of a FleetJob, as the hub decided it when it placed the job;
// with a WorkloadSpread, one cluster's part of one subset. A shard's completions and pod
// template never change once its Job exists (the API server refuses it); suspend does,
// and with a spread parallelism does too.
type shard struct {
	cluster string
	// subset is the WorkloadSpread subset; empty without a spread.
	subset string
	// template is the shard's pod template when it differs from the FleetJob's: a
	// subset's, with the subset's node terms, tolerations and patch.
	template    *corev1.PodTemplateSpec
	parallelism *int32
	completions *int32
	// indexes is the slice of the fleet's completion indexes, for a divided Indexed job.
	indexes *musterv1.IndexRange
	suspend bool
	// jobName is the name of the shard's Job as its Work carries it; empty for a new
	// shard, which gets JobName. A shard placed by an older hub keeps the name it has.
	jobName string

	// part, for a shard that runs the unfinished part of an evicted one, tells it from
	// the job's other shard in its cluster; fleetIndexes are the fleet's completion
	// indexes it runs (Indexed jobs), replaces the evicted shard's Work, and carried the
	// evicted shard's succeeded pods, counted with this part.
	part         string
	fleetIndexes string
	replaces     types.UID
	carried      int32
	// carriedIndexes, with carried, are the fleet indexes those pods completed (Indexed
	// jobs), so that a rest placed again (shortfall) leaves them out.
	carriedIndexes string
	// fence is how long the shard's agent may go without reaching the hub before it
	// stops the shard (musterv1.FenceAfterAnnotation); zero for none.
	fence time.Duration
}

func (s shard) key() string { return shards.PartKey(shards.Key(s.cluster, s.subset), s.part) }

// fleet is the fleet's completion indexes the shard runs: its range, or the set of a
// part; empty for a shard that is not Indexed.
func (s shard) fleet() indexset.Set {
	switch {
	case s.fleetIndexes != "":
		return indexset.Parse(s.fleetIndexes, math.MaxInt32)
	case s.indexes != nil:
		return indexset.Range(int(s.indexes.Start), int(s.indexes.End))
	}
	return indexset.Set{}
}

// describe names the shard in messages.
func (s shard) describe() string {
	if s.subset == "" {
		return "cluster " + s.cluster
	}
	return fmt.Sprintf("subset %s in cluster %s", s.subset, s.cluster)
}

// WorkName is the name of the Work that carries fj's shard, in the shard's member
// namespace: one per FleetJob, or one per subset with a WorkloadSpread.
func WorkName(fj *musterv1.FleetJob, subset string) string {
	return shards.WorkName("fleetjob", fj.Namespace, fj.Name, subset)
}

// JobName is the name of a new shard's Job in its member (names.ShardJob).
func JobName(fj *musterv1.FleetJob, subset string) string { return names.ShardJob(fj.Name, subset) }

// partName is what names a part's Work and Job where a subset would: the job's other
// shard in the cluster keeps its own. A Divided job has no subsets, so the two never meet.
func partName(part string) string { return "part-" + part }

// workName and jobName are the names of s's Work and, when new, its Job.
func workName(fj *musterv1.FleetJob, s shard) string {
	if s.part != "" {
		return WorkName(fj, partName(s.part))
	}
	return WorkName(fj, s.subset)
}

func jobName(fj *musterv1.FleetJob, s shard) string {
	switch {
	case s.jobName != "":
		return s.jobName
	case s.part != "":
		return JobName(fj, partName(s.part))
	}
	return JobName(fj, s.subset)
}

// shardJob is the member Job for s: the template's Job run by the agent's Job controller,
// built as the hub's webhook validated it at admission (templates.Job), with the shard's
// share, subset and index offset.
func shardJob(fj *musterv1.FleetJob, s shard) *batchv1.Job {
	job := templates.Job(jobName(fj, s), fj.Namespace, fj.UID, &fj.Spec.Template)
	if s.template != nil {
		job.Spec.Template = *s.template.DeepCopy()
	}
	job.Spec.Parallelism = s.parallelism
	job.Spec.Completions = s.completions
	if s.suspend {
		job.Spec.Suspend = ptr.To(true)
	}
	if s.subset != "" {
		job.Labels[musterv1.SubsetLabel] = s.subset
	}
	if s.fence > 0 {
		setAnnotation(job, musterv1.FenceAfterAnnotation, s.fence.String())
	}
	switch {
	case s.fleetIndexes != "":
		setAnnotation(job, musterv1.CompletionIndexesAnnotation, s.fleetIndexes)
	case s.indexes != nil:
		setAnnotation(job, musterv1.IndexOffsetAnnotation, strconv.Itoa(int(s.indexes.Start)))
	}
	return job
}

func setAnnotation(o metav1.Object, key, value string) {
	a := o.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[key] = value
	o.SetAnnotations(a)
}

// newWork wraps s in the Work that carries it to its cluster.
func newWork(fj *musterv1.FleetJob, s shard) (*musterv1.Work, error) {
	labels := map[string]string{
		musterv1.FleetJobUIDLabel:       string(fj.UID),
		musterv1.FleetJobNameLabel:      fj.Name,
		musterv1.FleetJobNamespaceLabel: fj.Namespace,
	}
	if s.subset != "" {
		labels[musterv1.SubsetLabel] = s.subset
	}
	if s.part != "" {
		labels[musterv1.PartLabel] = s.part
	}
	w, err := shards.NewWork(workName(fj, s), s.cluster, labels, shardJob(fj, s))
	if err != nil || s.part == "" {
		return w, err
	}
	if s.replaces != "" {
		setAnnotation(w, musterv1.ReplacesAnnotation, string(s.replaces))
	}
	if s.carried > 0 {
		setAnnotation(w, musterv1.CarriedSucceededAnnotation, strconv.Itoa(int(s.carried)))
	}
	if s.carriedIndexes != "" {
		setAnnotation(w, musterv1.CarriedIndexesAnnotation, s.carriedIndexes)
	}
	return w, nil
}

// readWork returns the shard a Work carries and the Job status its agent fed back (nil
// before the first report).
func readWork(work *musterv1.Work) (shard, *batchv1.JobStatus, error) {
	job, status, err := shards.Decode[batchv1.Job, batchv1.JobStatus](work)
	if job == nil {
		return shard{}, nil, err
	}
	s := shard{
		cluster: work.Labels[musterv1.ClusterNameLabel], subset: work.Labels[musterv1.SubsetLabel], template: &job.Spec.Template,
		parallelism: job.Spec.Parallelism, completions: job.Spec.Completions, suspend: ptr.Deref(job.Spec.Suspend, false),
		jobName: job.Name,
	}
	if s.part = work.Labels[musterv1.PartLabel]; s.part != "" {
		s.fleetIndexes = job.Annotations[musterv1.CompletionIndexesAnnotation]
		s.replaces = types.UID(work.Annotations[musterv1.ReplacesAnnotation])
		if n, err := strconv.ParseInt(work.Annotations[musterv1.CarriedSucceededAnnotation], 10, 32); err == nil && n > 0 {
			s.carried = int32(n)
		}
		s.carriedIndexes = work.Annotations[musterv1.CarriedIndexesAnnotation]
	}
	if d, err := time.ParseDuration(job.Annotations[musterv1.FenceAfterAnnotation]); err == nil && d > 0 {
		s.fence = d
	}
	if v, ok := job.Annotations[musterv1.IndexOffsetAnnotation]; ok {
		if start, err := strconv.Atoi(v); err == nil {
			s.indexes = &musterv1.IndexRange{Start: int32(start), End: int32(start) + ptr.Deref(s.completions, 0)}
		}
	}
	return s, status, err
}
