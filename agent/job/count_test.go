package job

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/musterhq/muster/internal/testing/builders"
)

// counted is what a test reads from a tally: counters, index sets and pod names.
type counted struct {
	Succeeded, Failed                   int32
	SucceededIndexes, FailedIndexes     string
	NewSucceeded, NewFailed, NewIgnored []string
	FailJob                             bool
}

func countedOf(t tally) counted {
	return counted{
		Succeeded: t.succeeded, Failed: t.failed,
		SucceededIndexes: t.succeededIndexes.String(), FailedIndexes: t.failedIndexes.String(),
		NewSucceeded: names(t.newSucceeded), NewFailed: names(t.newFailed), NewIgnored: names(t.newIgnored),
		FailJob: t.failJob != "",
	}
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// tracked is a pod of the job that still carries the tracking finalizer.
func tracked(name string) *builders.PodBuilder {
	return builders.MakePod(name, "ns").TrackingFinalizer()
}

func TestCountFinished(t *testing.T) {
	var (
		succeeded = func(name string) *builders.PodBuilder { return tracked(name).Phase(corev1.PodSucceeded) }
		failed    = func(name string, code int32) *builders.PodBuilder {
			return tracked(name).Phase(corev1.PodFailed).Exited("main", code, t0)
		}
		in = batchv1.PodFailurePolicyOnExitCodesOpIn
	)
	for _, tc := range []struct {
		name string
		job  *batchv1.Job
		pods []*corev1.Pod
		want counted
	}{
		{
			name: "finished pods add to the recorded counters",
			job:  builders.MakeJob("j", "ns").Completions(5).Counted(2, 1).Obj(),
			pods: []*corev1.Pod{succeeded("s").Obj(), failed("f", 1).Obj(), tracked("r").Running().Obj()},
			want: counted{Succeeded: 3, Failed: 2, NewSucceeded: []string{"s"}, NewFailed: []string{"f"}},
		},
		{
			name: "a pod already in uncountedTerminatedPods is not counted twice",
			job:  builders.MakeJob("j", "ns").Completions(5).Uncounted([]types.UID{"s"}, []types.UID{"f"}).Obj(),
			pods: []*corev1.Pod{succeeded("s").Obj(), failed("f", 1).Obj()},
			want: counted{Succeeded: 1, Failed: 1},
		},
		{
			name: "a pod whose finalizer is gone was counted before",
			job:  builders.MakeJob("j", "ns").Completions(5).Counted(1, 0).Obj(),
			pods: []*corev1.Pod{builders.MakePod("s", "ns").Phase(corev1.PodSucceeded).Obj()},
			want: counted{Succeeded: 1},
		},
		{
			name: "a pod being deleted before it finished counts as failed",
			job:  builders.MakeJob("j", "ns").Completions(5).Obj(),
			pods: []*corev1.Pod{tracked("d").Running().Deleting(t0).Obj()},
			want: counted{Failed: 1, NewFailed: []string{"d"}},
		},
		{
			name: "with podReplacementPolicy Failed a terminating pod is not failed yet",
			job:  builders.MakeJob("j", "ns").Completions(5).PodReplacementPolicy(batchv1.Failed).Obj(),
			pods: []*corev1.Pod{tracked("d").Running().Deleting(t0).Obj()},
		},
		{
			name: "a FailJob rule marks the job to fail",
			job:  builders.MakeJob("j", "ns").PodFailureRules(builders.ExitCodeRule(batchv1.PodFailurePolicyActionFailJob, in, 42)).Obj(),
			pods: []*corev1.Pod{failed("f", 42).Obj()},
			want: counted{Failed: 1, NewFailed: []string{"f"}, FailJob: true},
		},
		{
			name: "an ignored failure counts for nothing",
			job:  builders.MakeJob("j", "ns").PodFailureRules(builders.ExitCodeRule(batchv1.PodFailurePolicyActionIgnore, in, 42)).Obj(),
			pods: []*corev1.Pod{failed("f", 42).Obj()},
			want: counted{NewIgnored: []string{"f"}},
		},
		{
			name: "an Indexed job counts succeeded indexes, not pods",
			job:  builders.MakeJob("j", "ns").Indexed().Completions(4).CompletedIndexes("0").Obj(),
			pods: []*corev1.Pod{succeeded("s2").Index(2).Obj(), succeeded("s2again").Index(2).Obj()},
			want: counted{Succeeded: 2, SucceededIndexes: "0,2", NewSucceeded: []string{"s2", "s2again"}},
		},
		{
			name: "a pod of an index beyond completions is not counted",
			job:  builders.MakeJob("j", "ns").Indexed().Completions(2).Obj(),
			pods: []*corev1.Pod{succeeded("s5").Index(5).Obj(), failed("f7", 1).Index(7).Obj(), succeeded("none").Obj()},
		},
		{
			name: "a failure within backoffLimitPerIndex leaves the index open",
			job:  builders.MakeJob("j", "ns").Indexed().Completions(3).BackoffLimitPerIndex(1).Obj(),
			pods: []*corev1.Pod{failed("f1", 1).Index(1).Annotation(batchv1.JobIndexFailureCountAnnotation, "0").Obj()},
			want: counted{Failed: 1, NewFailed: []string{"f1"}},
		},
		{
			name: "a failure past backoffLimitPerIndex fails the index",
			job:  builders.MakeJob("j", "ns").Indexed().Completions(3).BackoffLimitPerIndex(1).Obj(),
			pods: []*corev1.Pod{failed("f1", 1).Index(1).Annotation(batchv1.JobIndexFailureCountAnnotation, "1").Obj()},
			want: counted{Failed: 1, FailedIndexes: "1", NewFailed: []string{"f1"}},
		},
		{
			name: "a FailIndex rule fails the index at its first failure",
			job: builders.MakeJob("j", "ns").Indexed().Completions(3).BackoffLimitPerIndex(3).
				PodFailureRules(builders.ExitCodeRule(batchv1.PodFailurePolicyActionFailIndex, in, 42)).Obj(),
			pods: []*corev1.Pod{failed("f2", 42).Index(2).Obj()},
			want: counted{Failed: 1, FailedIndexes: "2", NewFailed: []string{"f2"}},
		},
		{
			name: "a success of an index that already failed does not count",
			job:  builders.MakeJob("j", "ns").Indexed().Completions(3).BackoffLimitPerIndex(0).FailedIndexes("1").Obj(),
			pods: []*corev1.Pod{succeeded("s1").Index(1).Obj()},
			want: counted{FailedIndexes: "1", NewSucceeded: []string{"s1"}},
		},
		{
			name: "a failure of an index that already succeeded does not fail it",
			job:  builders.MakeJob("j", "ns").Indexed().Completions(3).BackoffLimitPerIndex(0).CompletedIndexes("1").Obj(),
			pods: []*corev1.Pod{failed("f1", 1).Index(1).Obj()},
			want: counted{Succeeded: 1, Failed: 1, SucceededIndexes: "1", NewFailed: []string{"f1"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := countedOf(countFinished(tc.job, &tc.job.Status, tc.pods))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("tally (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSettle(t *testing.T) {
	uids := func(u ...types.UID) []types.UID { return u }
	for _, tc := range []struct {
		name     string
		job      *batchv1.Job
		pods     []*corev1.Pod
		released []types.UID
		// want is the status after settling: counters and what stays uncounted.
		want batchv1.JobStatus
	}{
		{
			name:     "pods released this round move into the counters",
			job:      builders.MakeJob("j", "ns").Counted(1, 1).Uncounted(uids("s"), uids("f")).Obj(),
			pods:     []*corev1.Pod{tracked("s").Obj(), tracked("f").Obj()},
			released: uids("s", "f"),
			want:     batchv1.JobStatus{Succeeded: 2, Failed: 2, UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{}},
		},
		{
			name: "a pod still holding its finalizer stays uncounted",
			job:  builders.MakeJob("j", "ns").Uncounted(uids("s"), uids("f")).Obj(),
			pods: []*corev1.Pod{tracked("s").Obj(), tracked("f").Obj()},
			want: batchv1.JobStatus{UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{Succeeded: uids("s"), Failed: uids("f")}},
		},
		{
			name: "a pod that is gone is counted",
			job:  builders.MakeJob("j", "ns").Uncounted(nil, uids("gone")).Obj(),
			want: batchv1.JobStatus{Failed: 1, UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{}},
		},
		{
			name:     "an Indexed job's successes are counted by completedIndexes, not again",
			job:      builders.MakeJob("j", "ns").Indexed().Counted(3, 0).Uncounted(uids("s"), nil).Obj(),
			released: uids("s"),
			want:     batchv1.JobStatus{Succeeded: 3, UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{}},
		},
		{
			name: "a status without uncounted pods stays as it is",
			job:  builders.MakeJob("j", "ns").Counted(1, 1).Obj(),
			want: batchv1.JobStatus{Succeeded: 1, Failed: 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			released := map[types.UID]bool{}
			for _, u := range tc.released {
				released[u] = true
			}
			status := tc.job.Status.DeepCopy()
			settle(tc.job, status, tc.pods, released)
			if diff := cmp.Diff(&tc.want, status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}
