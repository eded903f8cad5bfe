//go:build e2e

package work

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/agent/worksync"
	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// BenchmarkWorkDelivery creates 200 Works of one ConfigMap each, split over both members,
// and reports P50 and P99 of the time from the Work's creation on the hub to its object in
// the member, and to the Applied feedback on the hub, per round (the first round also pays
// for the agents starting their informers) and for the last round as metrics. Run it with
// `make bench-work`.
func BenchmarkWorkDelivery(b *testing.B) {
	const works = 200
	for i := 0; b.Loop(); i++ {
		ctx, cancel := context.WithCancel(context.Background())
		var mu sync.Mutex
		created, inMember, fedBack := map[string]time.Time{}, map[string]time.Time{}, map[string]time.Time{}
		prefix := fmt.Sprintf("bench%d-", i)
		record := func(into map[string]time.Time, name string) {
			// A new watch starts with every existing object, earlier rounds' included.
			if !strings.HasPrefix(name, prefix) {
				return
			}
			mu.Lock()
			if _, seen := into[name]; !seen {
				into[name] = time.Now()
			}
			mu.Unlock()
		}
		for _, m := range fleet.Members {
			w, err := m.Clientset.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{LabelSelector: worksync.WorkLabel})
			if err != nil {
				b.Fatal(err)
			}
			go drain(w, func(o any) {
				if cm, ok := o.(*corev1.ConfigMap); ok {
					record(inMember, cm.Name)
				}
			})
		}
		hubWatch, err := client.NewWithWatch(fleet.Hub.Config, client.Options{Scheme: scheme.Scheme})
		if err != nil {
			b.Fatal(err)
		}
		ww, err := hubWatch.Watch(ctx, &musterv1.WorkList{})
		if err != nil {
			b.Fatal(err)
		}
		go drain(ww, func(o any) {
			if w, ok := o.(*musterv1.Work); ok && meta.IsStatusConditionTrue(w.Status.Conditions, musterv1.WorkApplied) {
				record(fedBack, w.Name)
			}
		})

		for n := range works {
			cluster := fleet.Members[n%len(fleet.Members)].Name
			name := fmt.Sprintf("%s%03d", prefix, n)
			w := newWork(b, cluster, name, configMap("default", name))
			record(created, name)
			if err := hub().Create(ctx, w); err != nil {
				b.Fatal(err)
			}
		}
		deadline := time.Now().Add(2 * time.Minute)
		for {
			mu.Lock()
			done := len(fedBack) >= works && len(inMember) >= works
			mu.Unlock()
			if done || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
		mu.Lock()
		applyLat, feedbackLat := latencies(created, inMember), latencies(created, fedBack)
		mu.Unlock()
		if len(applyLat) < works || len(feedbackLat) < works {
			var missing []string
			for name := range created {
				if _, ok := fedBack[name]; !ok {
					var w musterv1.Work
					_ = hub().List(context.Background(), &musterv1.WorkList{})
					for _, m := range fleet.Members {
						if err := hub().Get(context.Background(), client.ObjectKey{Namespace: musterv1.MemberNamespace(m.Name), Name: name}, &w); err == nil {
							missing = append(missing, fmt.Sprintf("%s/%s finalizers=%v status=%+v", w.Namespace, name, w.Finalizers, w.Status))
						}
					}
				}
			}
			b.Fatalf("only %d of %d objects reached the members and %d fed back; missing: %v", len(applyLat), works, len(feedbackLat), missing)
		}
		b.Logf("round %d: to member P50 %.0fms P99 %.0fms; to feedback P50 %.0fms P99 %.0fms", i,
			percentile(applyLat, 50), percentile(applyLat, 99), percentile(feedbackLat, 50), percentile(feedbackLat, 99))
		b.ReportMetric(percentile(applyLat, 50), "p50-to-member-ms")
		b.ReportMetric(percentile(applyLat, 99), "p99-to-member-ms")
		b.ReportMetric(percentile(feedbackLat, 50), "p50-to-feedback-ms")
		b.ReportMetric(percentile(feedbackLat, 99), "p99-to-feedback-ms")
	}
}

func drain(w watch.Interface, on func(any)) {
	for ev := range w.ResultChan() {
		if ev.Type == watch.Added || ev.Type == watch.Modified {
			on(ev.Object)
		}
	}
}

func latencies(from, to map[string]time.Time) []float64 {
	var out []float64
	for name, t := range to {
		if start, ok := from[name]; ok {
			out = append(out, float64(t.Sub(start).Microseconds())/1000)
		}
	}
	slices.Sort(out)
	return out
}

func percentile(sorted []float64, p int) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}
