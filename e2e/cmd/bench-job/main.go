// Command bench-job runs the same Job — completions 1000, parallelism 100 — on one member
// with 100 kwok nodes by kube-controller-manager's Job controller and by the agent's
// (spec.managedBy muster.dev/agent) in turns, -runs times each, both with client QPS 5000
// and burst 10000: times on a shared machine drift, so alternating runs on one fleet and
// comparing medians is what makes the ratio mean something. For each run it prints the
// wall time from creation to Complete and the write requests the member's API server
// served for Jobs, pods (not their status or binding, which the kubelet and scheduler
// write) and events; then the medians, and one `ratio` line per figure. `make bench-job`
// runs it. Per run it also prints the medians of its pods' phases as a watch saw them,
// among them the refill: how long a slot a pod freed stays empty.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/benchstat"
	"github.com/musterhq/muster/e2e/framework"
)

const (
	qps   = "5000" // what kwokctl --disable-qps-limits gives kube-controller-manager
	burst = "10000"
)

func main() {
	nodes := flag.Int("nodes", 100, "kwok nodes in the member")
	completions := flag.Int("completions", 1000, "the Job's completions")
	parallelism := flag.Int("parallelism", 100, "the Job's parallelism")
	runs := flag.Int("runs", 3, "runs per controller, alternating")
	flag.Parse()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, *nodes, int32(*completions), int32(*parallelism), max(*runs, 1)); err != nil {
		fmt.Fprintln(os.Stderr, "bench-job:", err)
		os.Exit(1)
	}
}

type result struct {
	name               string
	wall               time.Duration
	jobs, pods, events float64
	phases             phases
}

func (r result) writes() float64 { return r.jobs + r.pods + r.events }

func run(ctx context.Context, nodes int, completions, parallelism int32, runs int) error {
	dir, err := os.MkdirTemp("", "muster-bench-job-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	f, err := framework.Up(ctx, framework.FleetOptions{Dir: dir, Members: 1, NodesPerMember: nodes})
	if err != nil {
		return err
	}
	defer func() {
		if err := f.Down(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "tearing the fleet down:", err)
		}
	}()
	member := f.Members[0]
	if err := framework.WaitForClusterReady(ctx, member, nodes, 5*time.Minute); err != nil {
		return err
	}
	m, err := framework.InstallHub(ctx, f)
	if err != nil {
		return err
	}
	defer m.Stop()
	if err := m.StartHubProcess("--leader-elect=false"); err != nil {
		return err
	}
	if err := m.JoinAndAccept(ctx, f.Members, "--kube-api-qps", qps, "--kube-api-burst", burst); err != nil {
		return err
	}
	fmt.Printf("==> hub and member with %d nodes up; Job: completions %d, parallelism %d; %d runs each, alternating\n", nodes, completions, parallelism, runs)
	var kcm, agent []result
	for i := 1; i <= runs; i++ {
		for _, managedBy := range []string{"", musterv1.AgentManagedBy} {
			r, err := measure(ctx, member, managedBy, i, completions, parallelism)
			if err != nil {
				return err
			}
			if managedBy == "" {
				kcm = append(kcm, r)
			} else {
				agent = append(agent, r)
			}
			fmt.Printf("==> run %d %s: Complete in %.2fs; writes: jobs %.0f, pods %.0f, events %.0f\n", i, r.name, r.wall.Seconds(), r.jobs, r.pods, r.events)
			fmt.Printf("    pod medians: %s\n", r.phases)
		}
	}
	k, a := medians(kcm), medians(agent)
	fmt.Printf("\nmedians of %d runs\n%-32s %10s %8s %8s %8s %10s\n", runs, "CONTROLLER", "WALL (s)", "JOBS", "PODS", "EVENTS", "ALL WRITES")
	for _, r := range []result{k, a} {
		fmt.Printf("%-32s %10.2f %8.0f %8.0f %8.0f %10.0f\n", r.name, r.wall.Seconds(), r.jobs, r.pods, r.events, r.writes())
	}
	scenario := fmt.Sprintf("job-%dx%d", completions, parallelism)
	fmt.Printf("ratio %s muster/kube-controller-manager wall=%.2f\n", scenario, a.wall.Seconds()/k.wall.Seconds())
	fmt.Printf("ratio %s muster/kube-controller-manager writes=%.2f\n", scenario, a.writes()/k.writes())
	return nil
}

// medians is the median of each figure over the runs, each taken on its own.
func medians(runs []result) result {
	median := func(v func(result) float64) float64 { return benchstat.Median(runs, v) }
	return result{
		name:   runs[0].name,
		wall:   time.Duration(median(func(r result) float64 { return float64(r.wall) })),
		jobs:   median(func(r result) float64 { return r.jobs }),
		pods:   median(func(r result) float64 { return r.pods }),
		events: median(func(r result) float64 { return r.events }),
	}
}

// measure runs the Job in a namespace of its own and returns its wall time and the write
// requests counted while it ran.
func measure(ctx context.Context, member *framework.Cluster, managedBy string, run int, completions, parallelism int32) (result, error) {
	name := "kube-controller-manager"
	if managedBy != "" {
		name = "muster-agent"
	}
	r := result{name: name}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-%s-%d", map[bool]string{true: "agent", false: "kcm"}[managedBy != ""], run)}}
	if err := member.Client.Create(ctx, ns); err != nil {
		return r, err
	}
	if err := framework.Until(ctx, time.Minute, "the namespace's default service account", func(ctx context.Context) (bool, string, error) {
		err := member.Client.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, fmt.Sprint(err), nil
	}); err != nil {
		return r, err
	}
	before, err := writes(ctx, member)
	if err != nil {
		return r, err
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: ns.Name},
		Spec: batchv1.JobSpec{
			Completions: ptr.To(completions), Parallelism: ptr.To(parallelism), BackoffLimit: ptr.To[int32](10),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "work", Image: "busybox"}},
			}},
		},
	}
	if managedBy != "" {
		job.Spec.ManagedBy = ptr.To(managedBy)
	}
	start := time.Now()
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	times, err := watchPods(watchCtx, member.Clientset, ns.Name, start)
	if err != nil {
		return r, err
	}
	if err := member.Client.Create(ctx, job); err != nil {
		return r, err
	}
	if _, err := framework.WaitForJobCondition(ctx, member, client.ObjectKeyFromObject(job), batchv1.JobComplete, 15*time.Minute); err != nil {
		return r, err
	}
	r.wall = time.Since(start)
	r.phases = times.phases(int(parallelism))
	// Let the last finalizer removals and events land before counting.
	time.Sleep(3 * time.Second)
	after, err := writes(ctx, member)
	if err != nil {
		return r, err
	}
	r.jobs, r.pods, r.events = after.jobs-before.jobs, after.pods-before.pods, after.events-before.events
	return r, nil
}

type counters struct{ jobs, pods, events float64 }

// writes sums the write requests the member's API server served by resource. Pod status
// and binding are left out: the kubelet (kwok) and the scheduler write them, the same for
// both controllers.
func writes(ctx context.Context, member *framework.Cluster) (counters, error) {
	series, err := framework.APIWrites(ctx, member)
	if err != nil {
		return counters{}, err
	}
	var c counters
	for _, w := range series {
		switch {
		case w.Resource == "jobs":
			c.jobs += w.Count
		case w.Resource == "pods" && w.Subresource == "":
			c.pods += w.Count
		case w.Resource == "events":
			c.events += w.Count
		}
	}
	return c, nil
}
