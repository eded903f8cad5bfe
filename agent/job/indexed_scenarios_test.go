package job_test

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestNonIndexedPodsHaveNoIndex(t *testing.T) {
	f := newFixture(t)
	f.job(ptr.To[int32](1), ptr.To[int32](1))
	pods := f.waitRunning(1)
	if _, ok := pods[0].Annotations[batchv1.JobCompletionIndexAnnotation]; ok || len(pods[0].Spec.Containers[0].Env) != 0 || pods[0].Spec.Hostname != "" {
		t.Errorf("NonIndexed pod carries index details: %v %v %q", pods[0].Annotations, pods[0].Spec.Containers[0].Env, pods[0].Spec.Hostname)
	}
}

func TestIndexedCompletesOnlyWhenEveryIndexSucceeded(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](2), indexedMode)
	pods := f.waitRunning(2)
	f.finish(pods[0], corev1.PodSucceeded, 0)
	f.observed(j)
	if hasCondition(f.get(j), batchv1.JobSuccessCriteriaMet) {
		t.Fatal("one of two indexes met the success criteria")
	}
	f.finish(pods[1], corev1.PodSucceeded, 0)
	f.waitCondition(j, batchv1.JobComplete, batchv1.JobReasonCompletionsReached)
}

// A shard of a divided FleetJob runs fleet indexes: a range from an offset, or, when it
// took over what an evicted shard left unfinished, a set of them. Its pods show the fleet
// index in their annotation, environment, hostname and name.
func TestShardOfADividedJobShowsFleetIndexes(t *testing.T) {
	for _, tc := range []struct {
		name, annotation, value string
		want                    []string
	}{
		{name: "range", annotation: musterv1.IndexOffsetAnnotation, value: "10", want: []string{"10", "11", "12"}},
		{name: "set", annotation: musterv1.CompletionIndexesAnnotation, value: "3,7-8", want: []string{"3", "7", "8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.job(ptr.To[int32](3), ptr.To[int32](3), indexedMode, func(j *batchv1.Job) {
				j.Annotations = map[string]string{tc.annotation: tc.value}
			})
			for _, p := range f.waitRunning(3) {
				local, _ := strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation])
				global := tc.want[local]
				env := p.Spec.Containers[0].Env[0]
				if p.Annotations[musterv1.GlobalIndexAnnotation] != global || env.Value != global || p.Spec.Hostname != "job-"+global || !strings.HasPrefix(p.Name, "job-"+global+"-") {
					t.Errorf("pod %s for local index %d: annotation %q env %+v hostname %q, want fleet index %s in each",
						p.Name, local, p.Annotations[musterv1.GlobalIndexAnnotation], env, p.Spec.Hostname, global)
				}
			}
		})
	}
}

func TestIndexedCompletedIndexesWithGaps(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](4), ptr.To[int32](4), indexedMode)
	pods := f.waitRunning(4)
	for _, p := range pods {
		if i := p.Annotations[batchv1.JobCompletionIndexAnnotation]; i == "0" || i == "2" || i == "3" {
			f.finish(p, corev1.PodSucceeded, 0)
		}
	}
	f.waitStatus(j, counts{Active: 1, Succeeded: 3, Completed: "0,2,3"})
}

func TestDuplicatePodOfAnIndexIsRemoved(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1), indexedMode)
	pods := f.waitRunning(1)
	// A second, newer pod for index 0, as a restarted controller might find; the older
	// one stays. The sleep drives the pods' ages, not the test's wait: creation times have
	// a one-second grain, and the API server sets them.
	time.Sleep(1100 * time.Millisecond)
	dup := pods[0].DeepCopy()
	dup.ObjectMeta = metav1.ObjectMeta{
		GenerateName: "job-0-", Namespace: f.ns, Labels: dup.Labels, Annotations: dup.Annotations,
		OwnerReferences: dup.OwnerReferences, Finalizers: dup.Finalizers,
	}
	dup.Status = corev1.PodStatus{}
	if err := env.Client.Create(t.Context(), dup); err != nil {
		t.Fatal(err)
	}
	f.touch(j)
	f.eventually("one pod left for index 0", func() (bool, string) {
		running := f.running()
		return len(running) == 1 && running[0].UID == pods[0].UID, strconv.Itoa(len(running))
	})
}

// TestIndexedJobWithTheLargestCompletionsRunsByParallelism: the API server admits Indexed
// completions up to 2^31-1; such a job runs its lowest indexes at its parallelism and
// records finished ones as a range, as the built-in controller does.
func TestIndexedJobWithTheLargestCompletionsRunsByParallelism(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](2), ptr.To[int32](math.MaxInt32), func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	})
	for round := range 3 {
		pods := f.waitRunning(2)
		var got []string
		for _, p := range pods {
			got = append(got, p.Annotations[batchv1.JobCompletionIndexAnnotation])
			f.finish(p, corev1.PodSucceeded, 0)
		}
		slices.Sort(got)
		if want := []string{fmt.Sprint(2 * round), fmt.Sprint(2*round + 1)}; !slices.Equal(got, want) {
			t.Fatalf("round %d runs indexes %v, want %v", round, got, want)
		}
	}
	f.waitStatus(j, counts{Active: 2, Ready: 0, Succeeded: 6, Terminating: 0, Completed: "0-5"})
}
