package broadcastjob

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/shards"
)

// shardSpec is what the hub decides for one cluster's shard.
type shardSpec struct {
	// parallelism is the cluster's share of the fleet's parallelism; nil means no cap.
	parallelism *int32
	paused      bool
	// terminate, when set, stops the shard with this message.
	terminate string
}

func (s shardSpec) equal(o shardSpec) bool {
	return s.paused == o.paused && s.terminate == o.terminate &&
		(s.parallelism == nil) == (o.parallelism == nil) && (s.parallelism == nil || *s.parallelism == *o.parallelism)
}

// WorkName is the name of the Work that carries job's shard in every member namespace,
// which no other object's shard shares (shards.WorkName).
func WorkName(job *musterv1.BroadcastJob) string {
	return shards.WorkName("broadcastjob", job.Namespace, job.Name, "")
}

// shardObject is the member BroadcastJob for one cluster: the hub job's spec without
// placement, with the cluster's parallelism share. The hub keeps the fleet-wide decisions:
// its deadline and TTL are not passed on, and failurePolicy Pause becomes Continue so
// that the hub, not each cluster, pauses the whole fleet. FailFast stays: the cluster
// stops its own pods at once, the hub stops the others.
func shardObject(job *musterv1.BroadcastJob, s shardSpec) *musterv1.BroadcastJob {
	spec := job.Spec.DeepCopy()
	spec.Placement = nil
	spec.Paused = s.paused
	spec.Parallelism = nil
	if s.parallelism != nil {
		p := intstr.FromInt32(*s.parallelism)
		spec.Parallelism = &p
	}
	spec.CompletionPolicy = musterv1.CompletionPolicy{Type: job.Spec.CompletionPolicy.Type}
	if spec.FailurePolicy.Type == musterv1.FailurePause {
		spec.FailurePolicy.Type = musterv1.FailureContinue
	}
	shard := &musterv1.BroadcastJob{
		TypeMeta: metav1.TypeMeta{APIVersion: musterv1.GroupVersion.String(), Kind: "BroadcastJob"},
		ObjectMeta: metav1.ObjectMeta{
			Name: job.Name, Namespace: job.Namespace,
			Labels: map[string]string{musterv1.BroadcastJobUIDLabel: string(job.UID)},
		},
		Spec: *spec,
	}
	if s.terminate != "" {
		shard.Annotations = map[string]string{musterv1.TerminateAnnotation: s.terminate}
	}
	return shard
}

// newWork wraps the shard for cluster in the Work that carries it there.
func newWork(job *musterv1.BroadcastJob, cluster string, s shardSpec) (*musterv1.Work, error) {
	labels := map[string]string{
		musterv1.BroadcastJobUIDLabel:       string(job.UID),
		musterv1.BroadcastJobNameLabel:      job.Name,
		musterv1.BroadcastJobNamespaceLabel: job.Namespace,
	}
	return shards.NewWork(WorkName(job), cluster, labels, shardObject(job, s))
}

// readWork returns the shard spec a Work carries and the shard status its agent fed back
// (nil before the first report).
func readWork(work *musterv1.Work) (shardSpec, *musterv1.BroadcastJobStatus, error) {
	shard, status, err := shards.Decode[musterv1.BroadcastJob, musterv1.BroadcastJobStatus](work)
	if shard == nil {
		return shardSpec{}, nil, err
	}
	s := shardSpec{paused: shard.Spec.Paused, terminate: shard.Annotations[musterv1.TerminateAnnotation]}
	if p := shard.Spec.Parallelism; p != nil {
		v := p.IntVal
		s.parallelism = &v
	}
	return s, status, err
}
