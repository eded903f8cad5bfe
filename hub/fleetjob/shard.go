package fleetjob

import (
	"fmt"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

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
}

func (s shard) key() string { return shards.Key(s.cluster, s.subset) }

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

// shardJob is the member Job for s: the template's Job run by the agent's Job controller,
// built as the hub's webhook validated it at admission (templates.Job), with the shard's
// share, subset and index offset.
func shardJob(fj *musterv1.FleetJob, s shard) *batchv1.Job {
	name := s.jobName
	if name == "" {
		name = JobName(fj, s.subset)
	}
	job := templates.Job(name, fj.Namespace, fj.UID, &fj.Spec.Template)
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
	if s.indexes != nil {
		if job.Annotations == nil {
			job.Annotations = map[string]string{}
		}
		job.Annotations[musterv1.IndexOffsetAnnotation] = strconv.Itoa(int(s.indexes.Start))
	}
	return job
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
	return shards.NewWork(WorkName(fj, s.subset), s.cluster, labels, shardJob(fj, s))
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
	if v, ok := job.Annotations[musterv1.IndexOffsetAnnotation]; ok {
		if start, err := strconv.Atoi(v); err == nil {
			s.indexes = &musterv1.IndexRange{Start: int32(start), End: int32(start) + ptr.Deref(s.completions, 0)}
		}
	}
	return s, status, err
}
