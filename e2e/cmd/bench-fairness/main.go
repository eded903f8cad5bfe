// Command bench-fairness measures what one tenant's burst costs another on the hub: in
// hub namespace A a client creates -burst FleetJobs (from 8 goroutines), and as soon as
// they are created a second tenant creates one FleetJob in namespace B. It reports how
// long B's FleetJob waits for Scheduled=True and how many of A's were still unplaced at
// that moment, under the hub's FleetJob controller with its own queue (fairqueue: hub
// namespaces take turns) and with controller-runtime's default queue, in alternating
// runs (-runs each), then the medians and their ratio. The controller is the hub's own,
// against a real kube-apiserver (envtest) with two accepted members; no agent runs, so it
// measures placement (the Works written and the status), not the jobs.
// `make bench-fairness` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap/zapcore"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/hub/fleetjob"
	"github.com/musterhq/muster/internal/fairqueue"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// side is one queue under the same controller.
type side struct {
	name     string
	newQueue fairqueue.NewFunc
}

// result is one run's figures.
type result struct {
	wait      time.Duration // B's create to its Scheduled=True
	aUnplaced int           // A's FleetJobs without Scheduled=True when B got it
	drain     time.Duration // A's first create to the last of A's Scheduled=True
}

func main() {
	burst := flag.Int("burst", 500, "FleetJobs tenant A creates")
	runs := flag.Int("runs", 3, "runs per queue, alternating")
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.Level(zapcore.ErrorLevel)))
	if err := run(*burst, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "bench-fairness:", err)
		os.Exit(1)
	}
}

func run(burst, runs int) error {
	env, err := envtest.Start()
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	ctx := context.Background()
	for _, name := range []string{"fair-1", "fair-2"} {
		if err := addMember(ctx, env.Client, name); err != nil {
			return err
		}
	}
	sides := []side{
		{"fairqueue", fairqueue.New},
		{"controller-runtime default", func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
			return priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) { o.RateLimiter = rl })
		}},
	}
	results := map[string][]result{}
	for i := range runs {
		for j, s := range sides {
			r, err := measure(ctx, env, s, fmt.Sprintf("%d-%d", i, j), burst)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			fmt.Printf("run %d %-27s B waited %6.0f ms, %3d of A's %d unplaced then; A placed in %.1f s\n",
				i+1, s.name, ms(r.wait), r.aUnplaced, burst, r.drain.Seconds())
			results[s.name] = append(results[s.name], r)
		}
	}
	fair, peer := median(results[sides[0].name]), median(results[sides[1].name])
	fmt.Printf("fairness burst=%d: B's time to Scheduled median %.0f ms (fairqueue) vs %.0f ms (controller-runtime default), ratio %.3f; A's placement %.1f s vs %.1f s\n",
		burst, ms(fair.wait), ms(peer.wait), fair.wait.Seconds()/peer.wait.Seconds(), fair.drain.Seconds(), peer.drain.Seconds())
	return nil
}

// measure runs the hub's FleetJob controller with s's queue in a manager of its own, for
// one burst, and stops it.
func measure(ctx context.Context, env *envtest.Environment, s side, tag string, burst int) (result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: framework.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		// One process starts the controller once per run.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return result{}, err
	}
	r := &fleetjob.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("bench"), Clock: clock.RealClock{}, NewQueue: s.newQueue}
	if err := r.SetupWithManager(mgr); err != nil {
		return result{}, err
	}
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return result{}, fmt.Errorf("cache did not sync")
	}
	nsA, nsB := "tenant-a-"+tag, "tenant-b-"+tag
	for _, ns := range []string{nsA, nsB} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return result{}, err
		}
	}
	start := time.Now()
	if err := createBurst(ctx, env.Client, nsA, burst); err != nil {
		return result{}, err
	}
	bStart := time.Now()
	if err := env.Client.Create(ctx, fleetJob(nsB, "only")); err != nil {
		return result{}, err
	}
	var res result
	for scheduled(ctx, env.Client, nsB) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	res.wait = time.Since(bStart)
	res.aUnplaced = burst - scheduled(ctx, env.Client, nsA)
	for scheduled(ctx, env.Client, nsA) < burst {
		time.Sleep(50 * time.Millisecond)
	}
	res.drain = time.Since(start)
	return res, nil
}

func createBurst(ctx context.Context, c client.Client, ns string, n int) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				if err := c.Create(ctx, fleetJob(ns, fmt.Sprintf("job-%d", i))); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// scheduled counts ns's FleetJobs with Scheduled=True, read from the API server.
func scheduled(ctx context.Context, c client.Client, ns string) int {
	var list musterv1.FleetJobList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return 0
	}
	n := 0
	for _, fj := range list.Items {
		if meta.IsStatusConditionTrue(fj.Status.Conditions, musterv1.FleetJobScheduled) {
			n++
		}
	}
	return n
}

func fleetJob(ns, name string) *musterv1.FleetJob {
	return &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: musterv1.FleetJobSpec{Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}},
			}},
		}}},
	}
}

// addMember adds an accepted, available member cluster with its namespace on the hub.
func addMember(ctx context.Context, c client.Client, name string) error {
	mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: musterv1.MemberClusterSpec{Accepted: true}}
	if err := c.Create(ctx, mc); err != nil {
		return err
	}
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: musterv1.MemberClusterAvailable, Status: metav1.ConditionTrue, Reason: "Bench"})
	if err := c.Status().Update(ctx, mc); err != nil {
		return err
	}
	return c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: musterv1.MemberNamespace(name)}})
}

func median(rs []result) result {
	pick := func(f func(result) time.Duration) time.Duration {
		v := make([]time.Duration, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return result{wait: pick(func(r result) time.Duration { return r.wait }), drain: pick(func(r result) time.Duration { return r.drain })}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
