package fleetjob

import (
	"encoding/json"
	"fmt"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// shard is one cluster's part of a FleetJob, as the hub decided it when it placed the job.
// Only suspend changes afterwards: a Job's completions are immutable.
type shard struct {
	cluster     string
	parallelism *int32
	completions *int32
	// indexes is the slice of the fleet's completion indexes, for a divided Indexed job.
	indexes *musterv1.IndexRange
	suspend bool
}

// WorkName is the name of the Work that carries fj's shard in every member namespace.
func WorkName(fj *musterv1.FleetJob) string {
	return fmt.Sprintf("fleetjob-%s-%s", fj.Namespace, fj.Name)
}

// shardJob is the member Job for s: the template's Job run by the agent's Job controller.
func shardJob(fj *musterv1.FleetJob, s shard) *batchv1.Job {
	spec := fj.Spec.Template.Spec.DeepCopy()
	spec.ManagedBy = ptr.To(musterv1.AgentManagedBy)
	spec.Parallelism = s.parallelism
	spec.Completions = s.completions
	if s.suspend {
		spec.Suspend = ptr.To(true)
	}
	labels := map[string]string{}
	for k, v := range fj.Spec.Template.Labels {
		labels[k] = v
	}
	labels[musterv1.FleetJobUIDLabel] = string(fj.UID)
	annotations := map[string]string{}
	for k, v := range fj.Spec.Template.Annotations {
		annotations[k] = v
	}
	if s.indexes != nil {
		annotations[musterv1.IndexOffsetAnnotation] = strconv.Itoa(int(s.indexes.Start))
	}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: batchv1.SchemeGroupVersion.String(), Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: fj.Name, Namespace: fj.Namespace, Labels: labels, Annotations: annotations},
		Spec:       *spec,
	}
}

func newWork(fj *musterv1.FleetJob, s shard) (*musterv1.Work, error) {
	raw, err := json.Marshal(shardJob(fj, s))
	if err != nil {
		return nil, fmt.Errorf("encoding the shard for cluster %s: %w", s.cluster, err)
	}
	return &musterv1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Name:      WorkName(fj),
			Namespace: musterv1.MemberNamespace(s.cluster),
			Labels: map[string]string{
				musterv1.FleetJobUIDLabel:       string(fj.UID),
				musterv1.FleetJobNameLabel:      fj.Name,
				musterv1.FleetJobNamespaceLabel: fj.Namespace,
				musterv1.ClusterNameLabel:       s.cluster,
			},
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
	cluster := work.Labels[musterv1.ClusterNameLabel]
	if len(work.Spec.Manifests) != 1 {
		return shard{}, nil, fmt.Errorf("work %s/%s carries %d manifests, want 1", work.Namespace, work.Name, len(work.Spec.Manifests))
	}
	var job batchv1.Job
	if err := json.Unmarshal(work.Spec.Manifests[0].Raw, &job); err != nil {
		return shard{}, nil, fmt.Errorf("decoding the shard in work %s/%s: %w", work.Namespace, work.Name, err)
	}
	s := shard{cluster: cluster, parallelism: job.Spec.Parallelism, completions: job.Spec.Completions, suspend: ptr.Deref(job.Spec.Suspend, false)}
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
