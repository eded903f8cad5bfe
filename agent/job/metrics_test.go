package job_test

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	"github.com/musterhq/muster/internal/testing/envtest"
)

// The agent counts the pods it creates and deletes: a suspended job's two pods are two
// deletions, and its resumption two creations more.
func TestPodsCreatedAndDeletedAreCounted(t *testing.T) {
	f := newFixture(t)
	kind := map[string]string{"kind": "Job"}
	created := envtest.Metric(t, "muster_agent_pods_created_total", kind)
	deleted := envtest.Metric(t, "muster_agent_pods_deleted_total", kind)

	j := f.job(ptr.To[int32](2), ptr.To[int32](4))
	f.waitRunning(2)
	if got := envtest.Metric(t, "muster_agent_pods_created_total", kind) - created; got != 2 {
		t.Errorf("muster_agent_pods_created_total{kind=Job} grew by %v, want 2", got)
	}
	f.patchJob(j, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) })
	f.waitCondition(j, batchv1.JobSuspended, "JobSuspended")
	f.eventually("pods stopped", func() (bool, string) { return len(f.running()) == 0, "" })
	if got := envtest.Metric(t, "muster_agent_pods_deleted_total", kind) - deleted; got != 2 {
		t.Errorf("muster_agent_pods_deleted_total{kind=Job} grew by %v, want 2", got)
	}
	f.patchJob(j, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(false) })
	f.waitRunning(2)
	if got := envtest.Metric(t, "muster_agent_pods_created_total", kind) - created; got != 4 {
		t.Errorf("muster_agent_pods_created_total{kind=Job} grew by %v after resuming, want 4", got)
	}
}
