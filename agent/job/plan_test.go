package job

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/musterhq/muster/internal/testing/builders"

	"github.com/musterhq/muster/api/indexset"
)

func TestWantActive(t *testing.T) {
	job := func() *builders.JobBuilder { return builders.MakeJob("j", "ns") }
	for _, tc := range []struct {
		name   string
		job    *batchv1.Job
		tally  tally
		active int32
		want   int32
	}{
		{name: "a suspended job runs nothing", job: job().Parallelism(3).Completions(5).Suspend(true).Obj(), want: 0},
		{name: "parallelism bounds the running pods", job: job().Parallelism(3).Completions(5).Obj(), want: 3},
		{name: "unset parallelism runs one pod", job: job().Completions(5).Obj(), want: 1},
		{name: "zero parallelism runs nothing", job: job().Parallelism(0).Completions(5).Obj(), want: 0},
		{name: "no more pods than completions remain", job: job().Parallelism(3).Completions(5).Obj(), tally: tally{succeeded: 4}, want: 1},
		{name: "a job with all completions runs nothing", job: job().Parallelism(3).Completions(5).Obj(), tally: tally{succeeded: 5}, want: 0},
		{name: "more successes than completions never ask a negative number", job: job().Parallelism(3).Completions(2).Obj(), tally: tally{succeeded: 4}, want: 0},
		{name: "failures do not reduce what is left to run", job: job().Parallelism(3).Completions(5).Obj(), tally: tally{failed: 4}, want: 3},
		{name: "failed indexes are not run again", job: job().Indexed().Parallelism(3).Completions(4).BackoffLimitPerIndex(0).Obj(), tally: tally{succeeded: 1, failedIndexes: indexset.Parse("2-3", 4)}, want: 1},
		{name: "without completions the job runs parallelism pods until a success", job: job().Parallelism(3).Obj(), want: 3},
		{name: "without completions a success starts no new pods", job: job().Parallelism(3).Obj(), tally: tally{succeeded: 1}, active: 2, want: 2},
		{name: "without completions a success still honours a lowered parallelism", job: job().Parallelism(1).Obj(), tally: tally{succeeded: 1}, active: 2, want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := wantActive(tc.job, tc.tally, tc.active); got != tc.want {
				t.Errorf("wantActive = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestIndexesToStart(t *testing.T) {
	job := builders.MakeJob("j", "ns").Indexed().Completions(6).Obj()
	running := func(indexes ...int) []*corev1.Pod {
		var out []*corev1.Pod
		for _, i := range indexes {
			out = append(out, builders.MakePod("p", "ns").Index(i).Running().Obj())
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		tally   tally
		running []*corev1.Pod
		n       int
		want    []int
	}{
		{name: "a new job starts the lowest indexes", n: 3, want: []int{0, 1, 2}},
		{name: "succeeded, failed and running indexes are skipped", tally: tally{succeededIndexes: indexset.Parse("0", 6), failedIndexes: indexset.Parse("2", 6)}, running: running(1, 4), n: 3, want: []int{3, 5}},
		{name: "no index is started twice when more are asked than remain", tally: tally{succeededIndexes: indexset.Parse("0-4", 6)}, n: 3, want: []int{5}},
		{name: "a finished job starts nothing", tally: tally{succeededIndexes: indexset.Parse("0-5", 6)}, n: 3, want: []int{}},
		{name: "asking for none starts none", n: 0, want: []int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, indexesToStart(job, tc.tally, tc.running, tc.n)); diff != "" {
				t.Errorf("indexes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSurplus(t *testing.T) {
	indexed := builders.MakeJob("j", "ns").Indexed().Completions(3).Obj()
	pod := func(name string, index int, created int) *corev1.Pod {
		return builders.MakePod(name, "ns").Index(index).Running().Created(at(created)).Obj()
	}
	for _, tc := range []struct {
		name  string
		job   *batchv1.Job
		tally tally
		pods  []*corev1.Pod
		want  []string
	}{
		{name: "a NonIndexed job has no surplus by index", job: builders.MakeJob("j", "ns").Completions(3).Obj(), pods: []*corev1.Pod{pod("a", 0, 0), pod("b", 0, 1)}},
		{name: "one pod per open index is kept", job: indexed, pods: []*corev1.Pod{pod("a", 0, 0), pod("b", 1, 0), pod("c", 2, 0)}},
		{name: "the pod of an index that succeeded meanwhile is removed", job: indexed, tally: tally{succeededIndexes: indexset.Parse("1", 3)}, pods: []*corev1.Pod{pod("a", 0, 0), pod("b", 1, 0)}, want: []string{"b"}},
		{name: "the pod of an index that failed is removed", job: indexed, tally: tally{failedIndexes: indexset.Parse("0", 3)}, pods: []*corev1.Pod{pod("a", 0, 0)}, want: []string{"a"}},
		{name: "a duplicate of an index is removed and the oldest kept", job: indexed, pods: []*corev1.Pod{pod("new", 1, 5), pod("old", 1, 0)}, want: []string{"new"}},
		{name: "a pod beyond completions after a scale-down is removed", job: indexed, pods: []*corev1.Pod{pod("a", 0, 0), pod("far", 7, 0)}, want: []string{"far"}},
		{name: "a pod without an index is removed", job: indexed, pods: []*corev1.Pod{builders.MakePod("stray", "ns").Running().Obj()}, want: []string{"stray"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, names(surplus(tc.job, tc.tally, tc.pods))); diff != "" {
				t.Errorf("surplus (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRetries(t *testing.T) {
	perIndex := builders.MakeJob("j", "ns").Indexed().Completions(3).BackoffLimitPerIndex(2).
		PodFailureRules(builders.ExitCodeRule(batchv1.PodFailurePolicyActionIgnore, batchv1.PodFailurePolicyOnExitCodesOpIn, 42)).Obj()
	failed := func(name string, index int, code int32, finished int) *builders.PodBuilder {
		return tracked(name).Index(index).Phase(corev1.PodFailed).Exited("main", code, at(finished)).Created(at(finished - 1))
	}
	for _, tc := range []struct {
		name  string
		job   *batchv1.Job
		tally tally
		pods  []*corev1.Pod
		want  map[int]indexRetry
		keep  []types.UID
	}{
		{
			name: "a job without backoffLimitPerIndex has no index retries",
			job:  builders.MakeJob("j", "ns").Indexed().Completions(3).Obj(),
			pods: []*corev1.Pod{failed("f", 0, 1, 0).Obj()},
			want: map[int]indexRetry{},
		},
		{
			name: "an index's first failure retries it after ten seconds and keeps the failed pod",
			job:  perIndex,
			pods: []*corev1.Pod{failed("f", 1, 1, 5).Annotation(batchv1.JobIndexFailureCountAnnotation, "0").Obj()},
			want: map[int]indexRetry{1: {failures: 1, after: at(15)}},
			keep: []types.UID{"f"},
		},
		{
			name: "the second failure of an index waits twenty seconds",
			job:  perIndex,
			pods: []*corev1.Pod{failed("f", 1, 1, 5).Annotation(batchv1.JobIndexFailureCountAnnotation, "1").Obj()},
			want: map[int]indexRetry{1: {failures: 2, after: at(25)}},
			keep: []types.UID{"f"},
		},
		{
			name: "an ignored failure does not count but lengthens the wait",
			job:  perIndex,
			pods: []*corev1.Pod{failed("f", 0, 42, 5).Annotation(batchv1.JobIndexFailureCountAnnotation, "1").Obj()},
			want: map[int]indexRetry{0: {failures: 1, ignored: 1, after: at(25)}},
			keep: []types.UID{"f"},
		},
		{
			name: "the newest failed pod of an index decides",
			job:  perIndex,
			pods: []*corev1.Pod{
				failed("old", 2, 1, 5).Annotation(batchv1.JobIndexFailureCountAnnotation, "0").Obj(),
				failed("new", 2, 1, 50).Annotation(batchv1.JobIndexFailureCountAnnotation, "1").Obj(),
			},
			want: map[int]indexRetry{2: {failures: 2, after: at(70)}},
			keep: []types.UID{"new"},
		},
		{
			name: "an index whose replacement runs waits for nothing and lets the failed pod go",
			job:  perIndex,
			pods: []*corev1.Pod{failed("f", 1, 1, 5).Obj(), tracked("r").Index(1).Running().Obj()},
			want: map[int]indexRetry{},
		},
		{
			name:  "an index that failed for good is not retried",
			job:   perIndex,
			tally: tally{failedIndexes: indexset.Parse("1", 3)},
			pods:  []*corev1.Pod{failed("f", 1, 1, 5).Obj()},
			want:  map[int]indexRetry{},
		},
		{
			name:  "an index that succeeded is not retried",
			job:   perIndex,
			tally: tally{succeededIndexes: indexset.Parse("1", 3)},
			pods:  []*corev1.Pod{failed("f", 1, 1, 5).Obj()},
			want:  map[int]indexRetry{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, keep := retries(tc.job, tc.pods, tc.tally)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(indexRetry{})); diff != "" {
				t.Errorf("retries (-want +got):\n%s", diff)
			}
			wantKeep := map[types.UID]bool{}
			for _, u := range tc.keep {
				wantKeep[u] = true
			}
			if diff := cmp.Diff(wantKeep, keep); diff != "" {
				t.Errorf("kept finalizers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlan(t *testing.T) {
	running := func(name string, created int) *corev1.Pod {
		return tracked(name).Running().Ready().Created(at(created)).Obj()
	}
	type want struct {
		Delete []string
		Create []int
		Wait   time.Duration
	}
	for _, tc := range []struct {
		name    string
		job     *batchv1.Job
		tally   tally
		active  []*corev1.Pod
		other   []*corev1.Pod
		backoff backoffRecord
		retry   map[int]indexRetry
		want    want
	}{
		{
			name:   "missing NonIndexed pods are created",
			job:    builders.MakeJob("j", "ns").Parallelism(3).Completions(5).Obj(),
			active: []*corev1.Pod{running("a", 0)},
			want:   want{Create: []int{noIndex, noIndex}},
		},
		{
			name:    "a failure holds back replacements until the backoff ends",
			job:     builders.MakeJob("j", "ns").Parallelism(3).Completions(5).Obj(),
			active:  []*corev1.Pod{running("a", 0)},
			backoff: backoffRecord{failures: 1, lastFailure: at(-4)},
			want:    want{Wait: 6 * time.Second},
		},
		{
			name:    "replacements come once the backoff has passed",
			job:     builders.MakeJob("j", "ns").Parallelism(2).Completions(5).Obj(),
			backoff: backoffRecord{failures: 1, lastFailure: at(-10)},
			want:    want{Create: []int{noIndex, noIndex}},
		},
		{
			name: "lowering parallelism removes the unscheduled and newest pods first",
			job:  builders.MakeJob("j", "ns").Parallelism(1).Completions(5).Obj(),
			active: []*corev1.Pod{
				running("old", 0), running("new", 5),
				tracked("pending").Created(at(1)).Obj(),
			},
			want: want{Delete: []string{"pending", "new"}},
		},
		{
			name:   "suspending removes every running pod",
			job:    builders.MakeJob("j", "ns").Parallelism(2).Completions(5).Suspend(true).Obj(),
			active: []*corev1.Pod{running("a", 0), running("b", 1)},
			want:   want{Delete: []string{"b", "a"}},
		},
		{
			name:  "with podReplacementPolicy Failed a terminating pod is not replaced yet",
			job:   builders.MakeJob("j", "ns").Parallelism(2).Completions(5).PodReplacementPolicy(batchv1.Failed).Obj(),
			other: []*corev1.Pod{tracked("going").Running().Deleting(at(0)).Obj()},
			want:  want{Create: []int{noIndex}},
		},
		{
			name:   "an Indexed job starts its lowest open indexes",
			job:    builders.MakeJob("j", "ns").Indexed().Parallelism(3).Completions(5).Obj(),
			tally:  tally{succeeded: 1, succeededIndexes: indexset.Parse("0", 5)},
			active: []*corev1.Pod{tracked("p1").Index(1).Running().Obj()},
			want:   want{Create: []int{2, 3}},
		},
		{
			name:  "an index in its own backoff is skipped and the next one started",
			job:   builders.MakeJob("j", "ns").Indexed().Parallelism(2).Completions(5).BackoffLimitPerIndex(2).Obj(),
			retry: map[int]indexRetry{0: {failures: 1, after: at(8)}},
			want:  want{Create: []int{1, 2}, Wait: 8 * time.Second},
		},
		{
			name:    "backoffLimitPerIndex ignores the job-wide backoff",
			job:     builders.MakeJob("j", "ns").Indexed().Parallelism(1).Completions(5).BackoffLimitPerIndex(2).Obj(),
			backoff: backoffRecord{failures: 3, lastFailure: at(0)},
			want:    want{Create: []int{0}},
		},
		{
			name:   "a duplicate of an index is removed and nothing started in its place",
			job:    builders.MakeJob("j", "ns").Indexed().Parallelism(1).Completions(5).Obj(),
			active: []*corev1.Pod{tracked("old").Index(0).Running().Created(at(0)).Obj(), tracked("dup").Index(0).Running().Created(at(3)).Obj()},
			want:   want{Delete: []string{"dup"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pods := append(append([]*corev1.Pod{}, tc.active...), tc.other...)
			del, create, wait := plan(tc.job, tc.tally, tc.active, pods, tc.backoff, tc.retry, t0)
			if diff := cmp.Diff(tc.want, want{Delete: names(del), Create: create, Wait: wait}); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}
