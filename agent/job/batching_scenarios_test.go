package job_test

import (
	"fmt"
	"math"
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

// Pods finishing together are still handled together: twenty successes at once cost the
// two status writes of one round that records them and one that counts them, not a write
// per pod. The bound is the batching's own contract, at most two rounds within any Period,
// over the time the burst and its rounds took: on an idle machine that is two writes; on a
// loaded one the pods' writes may spread past the pause that ends a batch, and the bound
// grows with that time, never with the number of pods. (How soon a lone change is handled
// is a decision of internal/rounds, table-tested there; its wall time is bench-job's, side
// by side with kube-controller-manager.)
func TestABurstOfSuccessesSharesOneRound(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](20), ptr.To[int32](20))
	pods := f.waitRunning(20)
	f.waitStatus(j, counts{Active: 20})
	writes := f.watchStatusWrites(j)

	start := time.Now()
	var wg sync.WaitGroup
	for _, p := range pods {
		wg.Go(func() { f.finish(p, corev1.PodSucceeded, 0) })
	}
	wg.Wait()
	f.waitCondition(j, batchv1.JobComplete, "")
	periods := int(math.Ceil(float64(time.Since(start)) / float64(batchPeriod)))
	if got, most := writes(), 2*periods; got > most {
		t.Errorf("%d status writes for a burst of 20 successes over %d batch period(s), want at most %d (record, then count, per period)", got, periods, most)
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
