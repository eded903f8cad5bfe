package job

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/musterhq/muster/api/indexset"
)

// indexedRound is the state of an Indexed job in the middle of its run: the first done
// indexes recorded, parallelism pods running the next ones, and one that just succeeded.
func indexedRound(completions, parallelism int32, done int) (*batchv1.Job, []*corev1.Pod) {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "ns", UID: "job-uid"},
		Spec: batchv1.JobSpec{
			Completions:    ptr.To(completions),
			Parallelism:    ptr.To(parallelism),
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Template:       corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}},
		},
	}
	if done > 0 {
		job.Status.CompletedIndexes = fmt.Sprintf("0-%d", done-1)
	}
	var pods []*corev1.Pod
	for i := done; i < done+int(parallelism) && i < int(completions); i++ {
		phase := corev1.PodRunning
		if i == done {
			phase = corev1.PodSucceeded
		}
		pods = append(pods, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("big-%d", i), UID: types.UID(strconv.Itoa(i)),
				Annotations: map[string]string{indexAnnotation: strconv.Itoa(i)},
				Finalizers:  []string{trackingFinalizer},
			},
			Status: corev1.PodStatus{Phase: phase},
		})
	}
	return job, pods
}

// TestRoundBoundedByParallelism: a job may ask for 2^31-1 completions, as the built-in
// Job allows; one round must still cost what its parallelism costs. Before the index set
// kept runs and the search stopped at the pods it needs, this round walked (and listed)
// every unstarted index, and agents grew to gigabytes.
func TestRoundBoundedByParallelism(t *testing.T) {
	for _, completions := range []int32{10_000, math.MaxInt32} {
		job, pods := indexedRound(completions, 5, 1000)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		p := decideRound(job, pods, backoffRecord{}, fence{}, time.Now())
		runtime.ReadMemStats(&after)
		if want := []int{1005}; !slices.Equal(p.create, want) {
			t.Errorf("completions %d: creates %v, want %v", completions, p.create, want)
		}
		// The counter is the process's, and the suite's controllers run beside this test,
		// so the bound leaves room for them; walking 2^31 indexes allocated gigabytes.
		// BenchmarkIndexedRound measures the round itself (12 KB at parallelism 100).
		if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 16<<20 {
			t.Errorf("completions %d: one round allocated %d bytes, want under 16 MiB", completions, allocated)
		}
	}
}

// TestSuccessPolicyOverHugeRanges: a success policy naming every index of a 2^31-1
// completion job is checked on runs, not index by index.
func TestSuccessPolicyOverHugeRanges(t *testing.T) {
	job, _ := indexedRound(math.MaxInt32, 5, 0)
	job.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{
		{SucceededIndexes: ptr.To("0-2147483646"), SucceededCount: ptr.To[int32](3)},
	}}
	done := indexset.Parse("0,5,1000000000", math.MaxInt32)
	if _, ok := successPolicyMet(job, done); !ok {
		t.Error("3 succeeded indexes inside 0-2147483646 do not meet succeededCount 3")
	}
	if _, ok := successPolicyMet(job, indexset.Parse("0,5", math.MaxInt32)); ok {
		t.Error("2 succeeded indexes meet succeededCount 3")
	}
}

// TestRecordCapsFinishedPodsPerRound: as upstream, one round records at most a bounded
// number of finished pods; the rest keep their finalizer and are recorded next round.
func TestRecordCapsFinishedPodsPerRound(t *testing.T) {
	job := &batchv1.Job{Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](2000), Completions: ptr.To[int32](5000)}}
	var pods []*corev1.Pod
	for i := range 1200 {
		pods = append(pods, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint(i), UID: types.UID(fmt.Sprint(i)), Finalizers: []string{trackingFinalizer}},
			Status:     corev1.PodStatus{Phase: corev1.PodSucceeded},
		})
	}
	status := job.Status.DeepCopy()
	tally := countFinished(job, status, pods)
	release := record(job, status, pods, tally, nil, nil)
	if len(release) != maxPodWritesPerRound || len(status.UncountedTerminatedPods.Succeeded) != maxPodWritesPerRound {
		t.Errorf("released %d and recorded %d pods, want %d of each", len(release), len(status.UncountedTerminatedPods.Succeeded), maxPodWritesPerRound)
	}
}

// BenchmarkIndexedRound shows that one reconcile round of an Indexed job costs the same
// for 10, 10^5 and 2^31-1 completions at parallelism 100 (compare B/op and allocs/op).
func BenchmarkIndexedRound(b *testing.B) {
	for _, completions := range []int32{10, 100_000, math.MaxInt32} {
		b.Run(fmt.Sprintf("completions=%d", completions), func(b *testing.B) {
			done := min(int(completions)/2, 5000)
			job, pods := indexedRound(completions, 100, done)
			now := time.Now()
			b.ReportAllocs()
			for b.Loop() {
				decideRound(job, pods, backoffRecord{}, fence{}, now)
			}
		})
	}
}

// TestHugeDeadlineIsNeverReached: activeDeadlineSeconds is an int64 the API server
// accepts up to its maximum; one beyond what a Duration holds must not wrap into the past.
func TestHugeDeadlineIsNeverReached(t *testing.T) {
	job, _ := indexedRound(10, 1, 0)
	job.Spec.ActiveDeadlineSeconds = ptr.To[int64](math.MaxInt64)
	status := &batchv1.JobStatus{StartTime: &metav1.Time{Time: time.Now()}}
	if left, ok := deadlineLeft(job, status, time.Now()); ok && left <= 0 {
		t.Errorf("deadline %d s is already past (%v left)", *job.Spec.ActiveDeadlineSeconds, left)
	}
	job.Spec.ActiveDeadlineSeconds = ptr.To[int64](60)
	if left, ok := deadlineLeft(job, status, time.Now().Add(2*time.Minute)); !ok || left > 0 {
		t.Errorf("deadline 60 s not past after 2 min: %v, %v", left, ok)
	}
}
