package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// podTimes are when the bench first saw each of a run's pods created, bound, Running and
// Succeeded, from its start: the API server stamps these in whole seconds, too coarse to
// tell a controller's reaction from a wave of pods.
type podTimes struct {
	mu                                 sync.Mutex
	start                              time.Time
	created, bound, running, succeeded map[string]time.Duration
}

// watchPods records the pods of namespace ns until ctx ends; a watch the server closes
// is opened again (a pod seen again keeps its first times).
func watchPods(ctx context.Context, cs kubernetes.Interface, ns string, start time.Time) (*podTimes, error) {
	open := func() (watch.Interface, error) {
		w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("watching the run's pods: %w", err)
		}
		return w, nil
	}
	w, err := open()
	if err != nil {
		return nil, err
	}
	t := &podTimes{start: start, created: map[string]time.Duration{}, bound: map[string]time.Duration{},
		running: map[string]time.Duration{}, succeeded: map[string]time.Duration{}}
	go func() {
		for ctx.Err() == nil {
			for e := range w.ResultChan() {
				if p, ok := e.Object.(*corev1.Pod); ok {
					t.saw(p)
				}
			}
			w.Stop()
			if w, err = open(); err != nil {
				return
			}
		}
	}()
	return t, nil
}

func (t *podTimes) saw(p *corev1.Pod) {
	now := time.Since(t.start)
	t.mu.Lock()
	defer t.mu.Unlock()
	first := func(m map[string]time.Duration) {
		if _, ok := m[p.Name]; !ok {
			m[p.Name] = now
		}
	}
	first(t.created)
	if p.Spec.NodeName != "" {
		first(t.bound)
	}
	switch p.Status.Phase {
	case corev1.PodRunning:
		first(t.running)
	case corev1.PodSucceeded:
		first(t.succeeded)
	}
}

// phases are the medians of a run's pod phases, and of the refill: how long after the
// k-th pod succeeded the pod that took its slot (the parallelism+k-th created) appeared,
// which is the controller's own share of each wave.
type phases struct{ refill, refill90, toBound, toRunning, toSucceeded time.Duration }

func (t *podTimes) phases(parallelism int) phases {
	t.mu.Lock()
	defer t.mu.Unlock()
	between := func(from, to map[string]time.Duration) time.Duration {
		var d []time.Duration
		for name, a := range from {
			if b, ok := to[name]; ok {
				d = append(d, b-a)
			}
		}
		return medianOf(d)
	}
	created, succeeded := sortedTimes(t.created), sortedTimes(t.succeeded)
	var refill []time.Duration
	for k := 0; k < len(succeeded) && parallelism+k < len(created); k++ {
		refill = append(refill, created[parallelism+k]-succeeded[k])
	}
	return phases{refill: medianOf(refill), refill90: quantile(refill, 0.9), toBound: between(t.created, t.bound), toRunning: between(t.bound, t.running), toSucceeded: between(t.running, t.succeeded)}
}

func (p phases) String() string {
	return fmt.Sprintf("refill %.2fs (p90 %.2fs), created→bound %.2fs, bound→Running %.2fs, Running→Succeeded %.2fs",
		p.refill.Seconds(), p.refill90.Seconds(), p.toBound.Seconds(), p.toRunning.Seconds(), p.toSucceeded.Seconds())
}

func sortedTimes(m map[string]time.Duration) []time.Duration {
	out := make([]time.Duration, 0, len(m))
	for _, d := range m {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

func medianOf(d []time.Duration) time.Duration { return quantile(d, 0.5) }

func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[int(q*float64(len(d)-1))]
}
