// Command bench-cronjob runs 500 FleetCronJobs (the hub's controller) and 500 batch/v1
// CronJobs (kube-controller-manager's) on one hub, all "*/1 * * * *", for three minutes
// each (one kind after the other, or both at once with -together). It prints for each the
// P50, P99 and maximum lag from a slot to the moment its child appears in a watch, and the
// muster/built-in ratios. Both controllers run five workers (-workers changes the hub's)
// with client QPS 5000 and burst 10000 (what kwokctl --disable-qps-limits gives
// kube-controller-manager). The children are suspended Jobs and FleetJobs that no member
// runs: the benchmark measures scheduling, not running. `make bench-cronjob` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

const (
	qps      = "5000"
	burst    = "10000"
	schedule = "*/1 * * * *"
	// kcmScheduledAnnotation is where kube-controller-manager writes a child's slot.
	kcmScheduledAnnotation = "batch.kubernetes.io/cronjob-scheduled-timestamp"
)

func main() {
	count := flag.Int("crons", 500, "CronJobs of each kind")
	slots := flag.Int("slots", 3, "minutes measured")
	together := flag.Bool("together", false, "run both kinds at once instead of one after the other")
	workers := flag.Int("workers", 5, "the hub's FleetCronJob workers (kube-controller-manager runs 5)")
	flag.Parse()
	crlog.SetLogger(logr.Discard())
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, *count, *slots, *workers, *together); err != nil {
		fmt.Fprintln(os.Stderr, "bench-cronjob:", err)
		os.Exit(1)
	}
}

// lags records, per controller, how long after its slot each child was seen.
type lags struct {
	mu   sync.Mutex
	from time.Time // first slot measured
	to   time.Time // last slot measured
	seen map[string][]time.Duration
}

func (l *lags) observe(controller, slotText string) {
	now := time.Now()
	slot, err := time.Parse(time.RFC3339, slotText)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if slot.Before(l.from) || slot.After(l.to) {
		return
	}
	l.seen[controller] = append(l.seen[controller], now.Sub(slot))
}

func run(ctx context.Context, count, slots, workers int, together bool) error {
	dir, err := os.MkdirTemp("", "muster-bench-cronjob-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	f, err := framework.Up(ctx, framework.FleetOptions{Dir: dir})
	if err != nil {
		return err
	}
	defer func() {
		if err := f.Down(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "tearing the fleet down:", err)
		}
	}()
	m, err := framework.InstallHub(ctx, f)
	if err != nil {
		return err
	}
	defer m.Stop()
	if err := m.StartHubProcess("--leader-elect=false", "--kube-api-qps", qps, "--kube-api-burst", burst, "--concurrent-fleetcronjob-syncs", strconv.Itoa(workers)); err != nil {
		return err
	}
	hub := f.Hub
	for _, ns := range []string{"bench-kcm", "bench-muster"} {
		if err := hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}

	// Watch the children before any cron exists.
	l, err := watchChildren(ctx, hub)
	if err != nil {
		return err
	}
	kinds := []string{"kube-controller-manager", "muster-hub"}
	if together {
		if err := measure(ctx, hub.Client, l, kinds, count, slots); err != nil {
			return err
		}
	} else {
		for _, kind := range kinds {
			if err := measure(ctx, hub.Client, l, []string{kind}, count, slots); err != nil {
				return err
			}
		}
	}
	return report(l, kinds, count*slots)
}

// watchChildren records, from now on, the lag of every child Job (kube-controller-manager's
// CronJobs) and FleetJob (muster-hub's FleetCronJobs) behind its scheduled time.
func watchChildren(ctx context.Context, hub *framework.Cluster) (*lags, error) {
	informers, err := cache.New(hub.Config, cache.Options{Scheme: hub.Client.Scheme()})
	if err != nil {
		return nil, err
	}
	l := &lags{seen: map[string][]time.Duration{}, from: time.Now().Add(100 * 365 * 24 * time.Hour)}
	for _, w := range []struct {
		obj        client.Object
		controller string
		annotation string
	}{
		{&batchv1.Job{}, "kube-controller-manager", kcmScheduledAnnotation},
		{&musterv1.FleetJob{}, "muster-hub", musterv1.ScheduledTimeAnnotation},
	} {
		inf, err := informers.GetInformer(ctx, w.obj)
		if err != nil {
			return nil, err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
			if o, ok := obj.(client.Object); ok {
				l.observe(w.controller, o.GetAnnotations()[w.annotation])
			}
		}}); err != nil {
			return nil, err
		}
	}
	go func() { _ = informers.Start(ctx) }()
	if !informers.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("watching the children did not start")
	}
	return l, nil
}

// report prints each controller's children and lag percentiles, and their ratio.
func report(l *lags, kinds []string, want int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Printf("\n%-26s %8s %10s %10s %10s\n", "CONTROLLER", "CHILDREN", "P50 (ms)", "P99 (ms)", "MAX (ms)")
	stats := map[string][3]time.Duration{}
	for _, c := range kinds {
		d := l.seen[c]
		slices.Sort(d)
		if len(d) == 0 {
			return fmt.Errorf("%s created no child in the measured slots", c)
		}
		s := [3]time.Duration{percentile(d, 50), percentile(d, 99), d[len(d)-1]}
		stats[c] = s
		fmt.Printf("%-26s %4d/%-4d %10.0f %10.0f %10.0f\n", c, len(d), want, ms(s[0]), ms(s[1]), ms(s[2]))
	}
	k, h := stats["kube-controller-manager"], stats["muster-hub"]
	fmt.Printf("%-26s %9s %10.2f %10.2f %10.2f\n", "ratio muster / built-in", "", ms(h[0])/ms(k[0]), ms(h[1])/ms(k[1]), ms(h[2])/ms(k[2]))
	return nil
}

// measure creates count crons of each kind, records the lag of their children over the
// given number of slots, and deletes the crons again.
func measure(ctx context.Context, hub client.Client, l *lags, kinds []string, count, slots int) error {
	started := time.Now()
	for i := range count {
		for _, kind := range kinds {
			if err := hub.Create(ctx, newCron(kind, i)); err != nil {
				return fmt.Errorf("creating %s cron %d: %w", kind, i, err)
			}
		}
	}
	// Measure from the first slot at least 20s after every cron exists, so the
	// controllers have seen them all.
	first := time.Now().Add(20 * time.Second).Truncate(time.Minute).Add(time.Minute)
	last := first.Add(time.Duration(slots-1) * time.Minute)
	l.mu.Lock()
	l.from, l.to = first, last
	l.mu.Unlock()
	fmt.Printf("==> %s: %d crons each created in %.1fs; measuring the slots %s to %s\n",
		strings.Join(kinds, " and "), count, time.Since(started).Seconds(), first.Format("15:04"), last.Format("15:04"))
	select {
	case <-time.After(time.Until(last.Add(45 * time.Second))):
	case <-ctx.Done():
		return ctx.Err()
	}
	for _, kind := range kinds {
		if err := hub.DeleteAllOf(ctx, newCron(kind, 0), client.InNamespace(newCron(kind, 0).GetNamespace())); err != nil {
			return fmt.Errorf("deleting the %s crons: %w", kind, err)
		}
	}
	return nil
}

func newCron(kind string, i int) client.Object {
	if kind == "muster-hub" {
		return musterCron(i)
	}
	return kcmCron(i)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i-1, 0)]
}

func kcmCron(i int) *batchv1.CronJob {
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cron-%03d", i), Namespace: "bench-kcm"},
		Spec: batchv1.CronJobSpec{
			Schedule:          schedule,
			ConcurrencyPolicy: batchv1.AllowConcurrent,
			JobTemplate:       batchv1.JobTemplateSpec{Spec: jobSpec()},
		},
	}
}

func musterCron(i int) *musterv1.FleetCronJob {
	return &musterv1.FleetCronJob{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cron-%03d", i), Namespace: "bench-muster"},
		Spec: musterv1.FleetCronJobSpec{
			Schedule:          schedule,
			ConcurrencyPolicy: musterv1.ConcurrencyAllow,
			JobTemplate: &musterv1.FleetJobTemplateSpec{Spec: musterv1.FleetJobSpec{
				Template: batchv1.JobTemplateSpec{Spec: jobSpec()},
			}},
		},
	}
}

func jobSpec() batchv1.JobSpec {
	return batchv1.JobSpec{
		Suspend: ptr.To(true),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
		}},
	}
}
