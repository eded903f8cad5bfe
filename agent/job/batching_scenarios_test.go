package job_test

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A pod finishing on its own is handled without waiting out the batch period: the Job is
// Complete well within one period of its pod's success (with upstream's fixed delay, its
// two rounds, recording the pod and then counting it, took two periods).
func TestALoneSuccessCompletesWithinTheBatchPeriod(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](1))
	pods := f.waitRunning(1)
	// This sleep drives time rather than waiting for the controller: the Job's rounds at
	// its creation are a Period behind when its pod succeeds, which is then the Job's only
	// change within a Period, as the test means.
	time.Sleep(batchPeriod)
	start := time.Now()
	f.finish(pods[0], corev1.PodSucceeded, 0)
	f.waitCondition(j, batchv1.JobComplete, "")
	if took := time.Since(start); took >= batchPeriod {
		t.Errorf("Complete %v after the pod succeeded, want under the batch period %v", took, batchPeriod)
	}
}

// Pods finishing together are still handled together: twenty successes at once cost the
// two status writes of one round that records them and one that counts them, not a write
// per pod.
func TestABurstOfSuccessesSharesOneRound(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](20), ptr.To[int32](20))
	pods := f.waitRunning(20)
	f.waitStatus(j, counts{Active: 20})
	writes := f.watchStatusWrites(j)

	var wg sync.WaitGroup
	for _, p := range pods {
		wg.Go(func() { f.finish(p, corev1.PodSucceeded, 0) })
	}
	wg.Wait()
	f.waitCondition(j, batchv1.JobComplete, "")
	if got := writes(); got > 2 {
		t.Errorf("%d status writes for a burst of 20 successes, want 2 (record, then count)", got)
	}
}

// watchStatusWrites counts the writes that change the job's status from now on.
func (f *fixture) watchStatusWrites(j *batchv1.Job) func() int {
	f.t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		f.t.Fatal(err)
	}
	cur := f.get(j)
	w, err := wc.Watch(f.t.Context(), &batchv1.JobList{}, client.InNamespace(f.ns),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: cur.ResourceVersion}})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(w.Stop)
	var mu sync.Mutex
	n, last, delivered := 0, cur.Status, int64(0)
	go func() {
		for e := range w.ResultChan() {
			got, ok := e.Object.(*batchv1.Job)
			if e.Type != watch.Modified || !ok {
				continue
			}
			mu.Lock()
			if v, err := strconv.ParseInt(got.ResourceVersion, 10, 64); err == nil {
				delivered = v
			}
			if !equality.Semantic.DeepEqual(last, got.Status) {
				n++
				last = got.Status
			}
			mu.Unlock()
		}
	}()
	return func() int {
		// Wait until the watch delivered what the server already holds.
		rv, err := strconv.ParseInt(f.get(j).ResourceVersion, 10, 64)
		if err != nil {
			f.t.Fatal(err)
		}
		f.eventually("the watch caught up", func() (bool, string) {
			mu.Lock()
			defer mu.Unlock()
			return delivered >= rv, fmt.Sprintf("delivered %d of %d", delivered, rv)
		})
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}
