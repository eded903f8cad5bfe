package fleetjob

import (
	"encoding/json"
	"fmt"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

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
	if subset == "" {
		return shards.Name("fleetjob", fj.Namespace, fj.Name)
	}
	return shards.Name("fleetjob", fj.Namespace, fj.Name, subset)
}

// JobName is the name of the shard's Job in its member: the FleetJob's, suffixed with
// the subset so that two subsets can share a cluster.
func JobName(fj *musterv1.FleetJob, subset string) string {
	if subset == "" {
		return fj.Name
	}
	return shards.Name(fj.Name, subset)
}

// shardJob is the member Job for s: the template's Job run by the agent's Job controller,
// built as the hub's webhook validated it at admission (templates.Job), with the shard's
// share, subset and index offset.
func shardJob(fj *musterv1.FleetJob, s shard) *batchv1.Job {
	job := templates.Job(JobName(fj, s.subset), fj.Namespace, fj.UID, &fj.Spec.Template)
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

func newWork(fj *musterv1.FleetJob, s shard) (*musterv1.Work, error) {
	raw, err := json.Marshal(shardJob(fj, s))
	if err != nil {
		return nil, fmt.Errorf("encoding the shard for %s: %w", s.describe(), err)
	}
	labels := map[string]string{
		musterv1.FleetJobUIDLabel:       string(fj.UID),
		musterv1.FleetJobNameLabel:      fj.Name,
		musterv1.FleetJobNamespaceLabel: fj.Namespace,
		musterv1.ClusterNameLabel:       s.cluster,
	}
	if s.subset != "" {
		labels[musterv1.SubsetLabel] = s.subset
	}
	return &musterv1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Name:      WorkName(fj, s.subset),
			Namespace: musterv1.MemberNamespace(s.cluster),
			Labels:    labels,
		},
		Spec: musterv1.WorkSpec{
			Manifests:    []musterv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}},
			DeleteOption: &musterv1.DeleteOption{PropagationPolicy: musterv1.DeletePropagationDelete},
		},
	}, nil
}

// readWork returns the shard a Work carries and the Job status its agent fed back (nil
// before the first report).
func readWork(work *musterv1.Work) (shard, *batchv1.JobStatus, error) {
	cluster, subset := work.Labels[musterv1.ClusterNameLabel], work.Labels[musterv1.SubsetLabel]
	if len(work.Spec.Manifests) != 1 {
		return shard{}, nil, fmt.Errorf("work %s/%s carries %d manifests, want 1", work.Namespace, work.Name, len(work.Spec.Manifests))
	}
	var job batchv1.Job
	if err := json.Unmarshal(work.Spec.Manifests[0].Raw, &job); err != nil {
		return shard{}, nil, fmt.Errorf("decoding the shard in work %s/%s: %w", work.Namespace, work.Name, err)
	}
	s := shard{
		cluster: cluster, subset: subset, template: &job.Spec.Template,
		parallelism: job.Spec.Parallelism, completions: job.Spec.Completions, suspend: ptr.Deref(job.Spec.Suspend, false),
	}
	if v, ok := job.Annotations[musterv1.IndexOffsetAnnotation]; ok {
		if start, err := strconv.Atoi(v); err == nil {
			s.indexes = &musterv1.IndexRange{Start: int32(start), End: int32(start) + ptr.Deref(s.completions, 0)}
		}
	}
	if len(work.Status.Manifests) == 0 || work.Status.Manifests[0].Status == nil || len(work.Status.Manifests[0].Status.Raw) == 0 {
		return s, nil, nil
	}
	var status batchv1.JobStatus
	if err := json.Unmarshal(work.Status.Manifests[0].Status.Raw, &status); err != nil {
		return s, nil, fmt.Errorf("decoding the shard status in work %s/%s: %w", work.Namespace, work.Name, err)
	}
	return s, &status, nil
}
