// Command bench-cronjob measures how late a burst of crons that share a slot gets its
// children: -crons FleetCronJobs (the hub's controller) and as many batch/v1 CronJobs
// (kube-controller-manager's), all "*/1 * * * *", in alternating runs of -slots minutes,
// -runs per controller. Times on a shared machine drift, so alternating runs on one hub and
// comparing medians is what makes the ratio mean something. For each run it prints the
// P50, P99 and maximum lag from a slot to the moment its child appears in a watch; then the
// medians of the runs' P50 and P99 and one `ratio` line per figure. Both sides have client
// QPS 5000 and burst 10000 (what kwokctl --disable-qps-limits gives
// kube-controller-manager); kube-controller-manager runs its 5 CronJob workers, the hub its
// default; -workers 50,5 adds a turn per count, restarting the hub (the ratio lines are the
// first count's). The children are suspended Jobs and FleetJobs that no
// member runs: the benchmark measures scheduling, not running.
//
// Before the runs it measures the floor: how long -crons plain creates of Jobs and of
// FleetJobs (which pass the hub's admission webhook) take from one client with as many
// goroutines as the first worker count. With -phases (default) the hub logs its decisions and each of its runs is
// broken down: slot to the create being sent, the create call, and the watch's delivery,
// with the API server's mean create latencies. `make bench-cronjob` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/hub"
)

const (
	qps      = "5000"
	burst    = "10000"
	schedule = "*/1 * * * *"
	// kcmScheduledAnnotation is where kube-controller-manager writes a child's slot.
	kcmScheduledAnnotation = "batch.kubernetes.io/cronjob-scheduled-timestamp"

	kcm    = "kube-controller-manager"
	muster = "muster-hub"
)

type options struct {
	crons, runs, slots int
	// workers are the hub's FleetCronJob worker counts compared: with more than one, each
	// of the hub's turns restarts it with the next count.
	workers []int
	phases  bool
}

// side is one controller in the alternation, with the worker count the hub runs.
type side struct {
	controller string
	workers    int
}

func (s side) String() string {
	if s.controller == muster {
		return fmt.Sprintf("%s (%d workers)", muster, s.workers)
	}
	return s.controller
}

func main() {
	var o options
	flag.IntVar(&o.crons, "crons", 500, "CronJobs of each kind")
	flag.IntVar(&o.runs, "runs", 3, "runs per controller, alternating")
	flag.IntVar(&o.slots, "slots", 1, "minutes measured per run")
	o.workers = []int{hub.NewOptions().CronJobWorkers}
	flag.Func("workers", fmt.Sprintf("the hub's FleetCronJob workers, comma-separated to compare several (default %d); the first is also the floor's goroutines", o.workers[0]), func(v string) error {
		o.workers = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return fmt.Errorf("workers: %q is not a positive number", f)
			}
			o.workers = append(o.workers, n)
		}
		return nil
	})
	flag.BoolVar(&o.phases, "phases", true, "break the hub's lag down from its log (V(2)) and the API server's metrics")
	flag.Parse()
	crlog.SetLogger(logr.Discard())
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	o.runs, o.slots = max(o.runs, 1), max(o.slots, 1)
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-cronjob:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
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
	h := &hubProcess{m: m, phases: o.phases}
	if err := h.run(o.workers[0]); err != nil {
		return err
	}
	fmt.Printf("==> %d crons of each kind, %d runs each alternating, %d slot(s) a run; the hub runs %v FleetCronJob workers\n", o.crons, o.runs, o.slots, o.workers)
	if err := measureFloor(ctx, f.Hub, o.crons, o.workers[0]); err != nil {
		return err
	}
	w, err := watchChildren(ctx, f.Hub)
	if err != nil {
		return err
	}
	sides := []side{{controller: kcm}}
	for _, n := range o.workers {
		sides = append(sides, side{controller: muster, workers: n})
	}
	results := map[side][]result{}
	for i := 1; i <= o.runs; i++ {
		for _, s := range sides {
			if err := h.run(s.workers); err != nil {
				return err
			}
			r, err := measure(ctx, f.Hub, m, w, s, i, o)
			if err != nil {
				return err
			}
			results[s] = append(results[s], r)
		}
	}
	return report(sides, results, o)
}

// hubProcess runs the hub with a given number of FleetCronJob workers.
type hubProcess struct {
	m       *framework.Muster
	phases  bool
	workers int
}

// run (re)starts the hub unless it runs with workers already (0: whatever it runs).
func (h *hubProcess) run(workers int) error {
	if workers == 0 || workers == h.workers {
		return nil
	}
	if h.m.HubProc != nil {
		h.m.HubProc.Stop()
	}
	args := []string{"--leader-elect=false", "--kube-api-qps", qps, "--kube-api-burst", burst, "--concurrent-fleetcronjob-syncs", strconv.Itoa(workers)}
	if h.phases {
		args = append(args, "--zap-log-level=2")
	}
	h.workers = workers
	return h.m.StartHubProcess(args...)
}

// namespace makes the namespace of one run of one side.
func namespace(ctx context.Context, hubCluster *framework.Cluster, s side, run int) (string, error) {
	name := fmt.Sprintf("bench-kcm-%d", run)
	if s.controller == muster {
		name = fmt.Sprintf("bench-muster-%dw-%d", s.workers, run)
	}
	err := hubCluster.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	return name, err
}

// firstSlot is the first slot at least lead after now, so that the controller has seen
// every cron.
func firstSlot(now time.Time, lead time.Duration) time.Time {
	t := now.Add(lead)
	if slot := t.Truncate(time.Minute); !slot.Before(t) {
		return slot
	}
	return t.Truncate(time.Minute).Add(time.Minute)
}
