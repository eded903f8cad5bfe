package job

import (
	"time"

	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/musterhq/muster/internal/testing/builders"
)

func TestReplacements(t *testing.T) {
	var (
		running   = func(name string) *corev1.Pod { return tracked(name).Running().Obj() }
		succeeded = func(name string) *corev1.Pod { return tracked(name).Phase(corev1.PodSucceeded).Obj() }
		failed    = func(name string) *corev1.Pod {
			return tracked(name).Phase(corev1.PodFailed).Exited("main", 1, t0).Obj()
		}
		job = func() *builders.JobBuilder { return builders.MakeJob("j", "ns").Parallelism(3).Completions(10) }
	)
	for _, tc := range []struct {
		name    string
		job     *batchv1.Job
		pods    []*corev1.Pod
		backoff backoffRecord
		want    int
	}{
		{name: "pods that succeeded are replaced at once", job: job().Obj(),
			pods: []*corev1.Pod{running("a"), succeeded("b"), succeeded("c")}, want: 2},
		{name: "nothing finished, nothing to replace", job: job().Obj(),
			pods: []*corev1.Pod{running("a"), running("b"), running("c")}, want: 0},
		{name: "pods a round already recorded are its to replace", job: job().Uncounted([]types.UID{"b"}, nil).Obj(),
			pods: []*corev1.Pod{running("a"), running("c"), succeeded("b")}, want: 0},
		{name: "no more pods than completions are left", job: job().Counted(7, 0).Obj(),
			pods: []*corev1.Pod{running("a"), succeeded("b")}, want: 1},
		{name: "a failure is the round's: it may hold new pods back", job: job().Obj(),
			pods: []*corev1.Pod{running("a"), succeeded("b"), failed("c")}, want: 0},
		{name: "a success after the last failure resets the backoff, as the round folds it: its slot is filled", job: job().Obj(),
			pods:    []*corev1.Pod{running("a"), running("c"), tracked("b").Phase(corev1.PodSucceeded).Exited("main", 0, t0.Add(time.Second)).Obj()},
			backoff: backoffRecord{failures: 1, lastFailure: t0}, want: 1},
		{name: "a success before the last failure leaves the backoff: the slot waits", job: job().Obj(),
			pods:    []*corev1.Pod{running("a"), running("c"), tracked("b").Phase(corev1.PodSucceeded).Exited("main", 0, t0.Add(-time.Second)).Obj()},
			backoff: backoffRecord{failures: 1, lastFailure: t0}, want: 0},
		{name: "the last success ends the job: the round's", job: job().Counted(9, 0).Obj(),
			pods: []*corev1.Pod{succeeded("b")}, want: 0},
		{name: "a lowered parallelism deletes pods: the round's", job: job().Parallelism(1).Obj(),
			pods: []*corev1.Pod{running("a"), running("c"), succeeded("b")}, want: 0},
		{name: "an indexed job gets the indexes left", job: job().Indexed().Obj(),
			pods: []*corev1.Pod{tracked("a").Index(0).Running().Obj(), tracked("b").Index(1).Phase(corev1.PodSucceeded).Obj(), tracked("c").Index(2).Running().Obj()}, want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := replacements(tc.job, tc.pods, tc.backoff, fence{}, t0)
			if len(got) != tc.want {
				t.Errorf("replacements = %v, want %d pods", got, tc.want)
			}
		})
	}
}

func TestReplacementsOfAnIndexedJob(t *testing.T) {
	job := builders.MakeJob("j", "ns").Indexed().Parallelism(2).Completions(4).Obj()
	pods := []*corev1.Pod{tracked("a").Index(0).Phase(corev1.PodSucceeded).Obj(), tracked("b").Index(1).Running().Obj()}
	got, _ := replacements(job, pods, backoffRecord{}, fence{}, t0)
	if diff := cmp.Diff([]int{2}, got); diff != "" {
		t.Errorf("replacements (-want +got):\n%s", diff)
	}
}

func TestJustSucceeded(t *testing.T) {
	pod := func(p corev1.PodPhase) *corev1.Pod { return builders.MakePod("p", "ns").Phase(p).Obj() }
	for _, tc := range []struct {
		name     string
		old, new *corev1.Pod
		want     bool
	}{
		{name: "a running pod that succeeds", old: pod(corev1.PodRunning), new: pod(corev1.PodSucceeded), want: true},
		{name: "a pending pod that succeeds", old: pod(corev1.PodPending), new: pod(corev1.PodSucceeded), want: true},
		{name: "a pod that fails is the round's", old: pod(corev1.PodRunning), new: pod(corev1.PodFailed)},
		{name: "a succeeded pod that changes again (its finalizer released)", old: pod(corev1.PodSucceeded), new: pod(corev1.PodSucceeded)},
		{name: "a pod that starts running", old: pod(corev1.PodPending), new: pod(corev1.PodRunning)},
		{name: "a deleted pod that succeeds frees no slot it still held", old: builders.MakePod("p", "ns").Running().Deleting(t0).Obj(), new: pod(corev1.PodSucceeded)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := justSucceeded(tc.old, tc.new); got != tc.want {
				t.Errorf("justSucceeded = %v, want %v", got, tc.want)
			}
		})
	}
}
