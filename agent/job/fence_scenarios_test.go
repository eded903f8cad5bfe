package job_test

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// TestAFencedJobStopsForGoodOnceTheAgentLosesTheHubPastItsFence runs a shard Job with the
// hub's fence of five minutes: four minutes without reaching the hub change nothing; six
// end the Job with reason Fenced and stop its pods; and when the agent reaches the hub
// again no pod starts, since the hub may by then run the shard elsewhere.
func TestAFencedJobStopsForGoodOnceTheAgentLosesTheHubPastItsFence(t *testing.T) {
	t.Cleanup(func() { hubSilence.Store(0) })
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](4), func(j *batchv1.Job) {
		j.Annotations = map[string]string{musterv1.FenceAfterAnnotation: "5m"}
		j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
	})
	f.waitRunning(2)

	hubSilence.Store(int64(4 * time.Minute))
	f.observed(j)
	if got := f.get(j); jobFinishedOrEnding(got) || len(f.running()) != 2 {
		t.Fatalf("within its fence the job has conditions %s and %d running pods; want it running on", conditions(got), len(f.running()))
	}

	hubSilence.Store(int64(6 * time.Minute))
	f.touch(j)
	fenced := f.waitCondition(j, batchv1.JobFailed, musterv1.JobReasonFenced)
	if c := findCondition(fenced, batchv1.JobFailed); c == nil || !strings.Contains(c.Message, "5m0s") {
		t.Errorf("the Fenced condition says %+v; want it to name the fence", c)
	}
	if n := len(f.running()); n != 0 {
		t.Errorf("%d pods still run after the fence", n)
	}

	hubSilence.Store(0)
	f.observed(j)
	if n := len(f.pods(true)); n != 0 {
		t.Errorf("%d pods exist once the agent reaches the hub again; want none started after the fence", n)
	}
}

func findCondition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == t {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}
