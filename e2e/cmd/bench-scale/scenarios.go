package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/agent/heartbeat"
	"github.com/musterhq/muster/agent/registration"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/fleetsim"
	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/hub"
)

// bench is one run of the scenarios against one hub.
type bench struct {
	o options
	// up is the fleet (the hub alone, until the agent scenario adds a member), and muster
	// the hub's processes and the agents it starts.
	up     *framework.Fleet
	muster *framework.Muster
	hub    *framework.Cluster
	// hubMetrics is the hub's /metrics URL.
	hubMetrics string
	// stopChurn ends the simulated members' node churn that inventory starts.
	stopChurn context.CancelFunc
	boot      registration.Bootstrap
	fleet     *fleetsim.Fleet
	watch     *fleetWatch
	samples   *sampler
}

// join: every member joins at once and becomes Available.
func (b *bench) join(ctx context.Context) error {
	b.samples.reset()
	start := time.Now()
	joining, cancel := context.WithTimeout(ctx, b.o.timeout)
	defer cancel()
	if err := b.fleet.Join(joining, ctx, b.boot); err != nil {
		return err
	}
	certified := time.Since(start)
	available, err := waitFor(ctx, start, b.o.timeout, "every member Available", func() bool { return b.watch.availableCount() >= b.o.members })
	if err != nil {
		return err
	}
	b.fleet.AnswerWorks(ctx)
	fmt.Printf("scale join members=%d parallel=%d certified=%s available=%s%s\n", b.o.members, b.o.parallel, round(certified), round(available), b.samples.figures())
	return nil
}

// inventory: every member writes its nodes; the hub's memory once it settled, per node.
func (b *bench) inventory(ctx context.Context) error {
	b.samples.reset()
	storedBefore, err := b.storageBytes(ctx)
	if err != nil {
		return err
	}
	rssBefore := b.samples.hubRSS()
	start := time.Now()
	if err := b.fleet.Report(ctx); err != nil {
		return err
	}
	reported := time.Since(start)
	settled, err := b.settle(ctx)
	if err != nil {
		return err
	}
	storedAfter, err := b.storageBytes(ctx)
	if err != nil {
		return err
	}
	nodes := float64(b.o.members * b.o.nodes)
	fmt.Printf("scale inventory members=%d nodes=%d reported=%s settled=%s hub-bytes-per-node=%.0f storage-bytes-per-node=%.0f goal-hub-rss=4096MiB%s\n",
		b.o.members, b.o.members*b.o.nodes, round(reported), round(settled), float64(b.samples.hubRSS()-rssBefore)/nodes, (storedAfter-storedBefore)/nodes, b.samples.figures())
	churning, stop := context.WithCancel(ctx)
	b.stopChurn = stop
	go b.fleet.Churn(churning, b.o.churn, time.Minute, func(round, slices int, took time.Duration) {
		fmt.Printf("scale churn round=%d slices-written=%d took=%s\n", round, slices, took.Round(time.Millisecond))
	})
	return nil
}

// settle waits until the hub has taken the slices in: its API server's watch delivers
// them after the writes return, and the hub decodes them into its inventory. There is no
// count of its nodes to read, so it waits for the hub's resident memory to hold within
// 1 % over 10 s, at most 3 minutes, and returns how long that took.
func (b *bench) settle(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	last := b.samples.hubRSS()
	for time.Since(start) < 3*time.Minute {
		if err := pause(ctx, 10*time.Second); err != nil {
			return 0, err
		}
		now := b.samples.hubRSS()
		if diff := now - last; max(diff, -diff) < now/100 {
			break
		}
		last = now
	}
	return time.Since(start), nil
}

// placement: one Divided FleetJob over every member, then -jobs at once, against the
// floor of as many plain creates.
func (b *bench) placement(ctx context.Context) error {
	for _, count := range []int{1, b.o.jobs} {
		b.samples.reset()
		jobs := make([]*musterv1.FleetJob, count)
		for i := range jobs {
			jobs[i] = fleetsim.DividedJob(metav1.NamespaceDefault, fmt.Sprintf("scale-%d-%d", count, i), b.o.members)
		}
		// The floor is taken first, on the API server as the jobs will find it.
		floor, err := b.floor(ctx, count*b.o.members)
		if err != nil {
			return err
		}
		decidedBefore, err := b.decisionsOf(ctx, "FleetJob")
		if err != nil {
			return err
		}
		start := time.Now()
		if err := forEach(ctx, jobs, func(ctx context.Context, fj *musterv1.FleetJob) error { return b.hub.Client.Create(ctx, fj) }); err != nil {
			return err
		}
		uids := make([]string, len(jobs))
		for i, fj := range jobs {
			uids[i] = string(fj.UID)
		}
		// A Divided job's shares follow the members' free capacity, so some members may
		// get none: the Works to wait for are the shards the hub placed. It writes a job's
		// Scheduled condition once all of them are created, so they are counted then;
		// written is when the last of them was seen. Completion, which waits on the
		// simulated agents' status writes as well, is timed apart.
		var scheduledAt map[string]string
		want := 0
		_, err = waitFor(ctx, start, b.o.timeout, "the FleetJobs to be scheduled", func() bool {
			scheduledAt = b.allScheduled(ctx, jobs)
			return scheduledAt != nil
		})
		if err == nil {
			want, err = b.waitWritten(ctx, start, scheduledAt)
		}
		if err != nil {
			// The next scenarios should not share the hub with these jobs.
			_, cleanup := deleteAll(ctx, b, jobs)
			return errors.Join(err, cleanup)
		}
		written := b.watch.lastWorkSeen(uids...).Sub(start)
		complete, err := waitFor(ctx, start, b.o.timeout, "the FleetJobs to complete", func() bool { return b.allComplete(ctx, jobs) })
		completed := round(complete).String()
		switch {
		case errors.Is(err, errMissed) && ctx.Err() == nil:
			completed = "missed(" + b.o.timeout.String() + ")"
		case err != nil:
			return err
		}
		decided, err := b.decisionsOf(ctx, "FleetJob")
		if err != nil {
			return err
		}
		var fj musterv1.FleetJob
		if err := b.hub.Client.Get(ctx, client.ObjectKeyFromObject(jobs[0]), &fj); err != nil {
			return err
		}
		size, _ := json.Marshal(&fj)
		figures := b.samples.figures()
		deleted, err := deleteAll(ctx, b, jobs)
		if err != nil {
			return err
		}
		fmt.Printf("scale placement jobs=%d members=%d works=%d decision-mean=%s decision-max-under=%s goal-decision=100ms written=%s floor=%s floor-creates=%d ratio=%.2f complete=%s deleted=%s fleetjob-bytes=%d status-write-failures=%d%s\n",
			count, b.o.members, want, decided.meanSince(decidedBefore), decided.slowestSince(decidedBefore), round(written), floor.Round(time.Millisecond), count*b.o.members,
			written.Seconds()/floor.Seconds(), completed, round(deleted), len(size), b.fleet.StatusFailures(), figures)
	}
	return nil
}

// deleteAll deletes objs and returns how long until they and their shards were gone.
func deleteAll[T client.Object](ctx context.Context, b *bench, objs []T) (time.Duration, error) {
	start := time.Now()
	if err := forEach(ctx, objs, func(ctx context.Context, o T) error {
		return client.IgnoreNotFound(b.hub.Client.Delete(ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground)))
	}); err != nil {
		return 0, err
	}
	return waitFor(ctx, start, b.o.timeout, fmt.Sprintf("%d deleted objects to go", len(objs)), func() bool {
		for _, o := range objs {
			if err := b.hub.Client.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopyObject().(client.Object)); !apierrors.IsNotFound(err) {
				return false
			}
		}
		return true
	})
}

// broadcast: one BroadcastJob over every node of every member: time until every
// member's shard is written, and until the hub aggregates the members' reports into
// Complete; the hub's own decision time, and the job's size.
func (b *bench) broadcast(ctx context.Context) error {
	b.samples.reset()
	job := fleetsim.BroadcastJob(metav1.NamespaceDefault, "scale-broadcast")
	before, err := b.decisionsOf(ctx, "BroadcastJob")
	if err != nil {
		return err
	}
	start := time.Now()
	if err := b.hub.Client.Create(ctx, job); err != nil {
		return err
	}
	written, err := waitFor(ctx, start, b.o.timeout, fmt.Sprintf("%d BroadcastJob shards", b.o.members), func() bool { return b.watch.worksOf(string(job.UID)) >= b.o.members })
	if err != nil {
		return err
	}
	var got musterv1.BroadcastJob
	complete, err := waitFor(ctx, start, b.o.timeout, "the BroadcastJob to complete", func() bool {
		return b.hub.Client.Get(ctx, client.ObjectKeyFromObject(job), &got) == nil && got.Status.Phase == musterv1.BroadcastJobCompleted
	})
	if err != nil {
		return err
	}
	decided, err := b.decisionsOf(ctx, "BroadcastJob")
	if err != nil {
		return err
	}
	size, _ := json.Marshal(&got)
	figures := b.samples.figures()
	deleted, err := deleteAll(ctx, b, []*musterv1.BroadcastJob{&got})
	if err != nil {
		return err
	}
	fmt.Printf("scale broadcast members=%d nodes=%d desired=%d succeeded=%d decisions=%d decision-mean=%s decision-max-under=%s written=%s complete=%s deleted=%s broadcastjob-bytes=%d%s\n",
		b.o.members, b.o.members*b.o.nodes, got.Status.Desired, got.Status.Succeeded, decided.count-before.count, decided.meanSince(before), decided.slowestSince(before),
		round(written), round(complete), round(deleted), len(size), figures)
	return nil
}

// reconnect: every simulated agent restarts at once, as a rollout of the agents or a
// reboot of every member would: each makes its clients again, renews, lists its
// NodeSlices and writes those that changed, and lists its Works again. How long until
// all are back, and until the hub's work queues hold at most a handful again (steady);
// the hub's peak memory; the false Unknowns so far.
func (b *bench) reconnect(ctx context.Context) error {
	b.samples.reset()
	start := time.Now()
	restarting, cancel := context.WithTimeout(ctx, b.o.timeout)
	defer cancel()
	wrote, err := b.fleet.Restart(restarting, ctx, b.boot, 0)
	if err != nil {
		return fmt.Errorf("restarting the simulated agents: %w", err)
	}
	restarted := time.Since(start)
	steady, err := waitFor(ctx, start, b.o.timeout, "the hub's work queues to drain", func() bool {
		n, err := b.queued(ctx)
		return err == nil && n <= steadyQueue
	})
	if err != nil {
		return err
	}
	fmt.Printf("scale reconnect members=%d restarted=%s slices-written=%d steady=%s goal-steady=2m false-unknown=%d goal-hub-rss-peak=6144MiB%s\n",
		b.o.members, round(restarted), wrote, round(steady), b.watch.falseUnknowns(), b.samples.figures())
	return nil
}

// steadyQueue is how many objects may wait in the hub's work queues of a steady fleet:
// the Lease renewals of a thousand members keep a few in them at any instant.
const steadyQueue = 5

// health: one member stops renewing; how long from its last renewal until the hub
// marks it, and how many other members it ever marked during the run.
func (b *bench) health(ctx context.Context) error {
	victim := b.fleet.Members[len(b.fleet.Members)-1]
	stopped := time.Now()
	victim.StopRenewing()
	var lease coordinationv1.Lease
	if err := b.hub.Client.Get(ctx, client.ObjectKey{Namespace: musterv1.MemberNamespace(victim.Name), Name: heartbeat.LeaseName}, &lease); err != nil {
		return err
	}
	if _, err := waitFor(ctx, stopped, b.o.timeout, victim.Name+" to be marked not Available", func() bool {
		_, lost := b.watch.lostSince(victim.Name, stopped)
		return lost
	}); err != nil {
		return err
	}
	at, _ := b.watch.lostSince(victim.Name, stopped)
	grace := hub.NewOptions().ClusterGracePeriod
	fmt.Printf("scale health unknown-after-last-renewal=%s grace=%s goal=%s renew=%s false-unknown=%d\n",
		round(at.Sub(lease.Spec.RenewTime.Time)), grace, grace+5*time.Second, b.o.renew, b.watch.falseUnknowns(victim.Name))
	return nil
}

// waitWritten waits until the fleet watch has seen every Work the API server holds for
// each owner UID of scheduledAt at the owner's resource version there (or later). A list
// at a version is served from the API server's watch cache: counted from etcd, the Works
// of ten jobs over a thousand members outran the API server's request timeout under churn.
// It returns how many Works that is.
func (b *bench) waitWritten(ctx context.Context, start time.Time, scheduledAt map[string]string) (int, error) {
	want := 0
	var uids []string
	for uid, at := range scheduledAt {
		uids = append(uids, uid)
		var works metav1.PartialObjectMetadataList
		works.SetGroupVersionKind(musterv1.GroupVersion.WithKind("WorkList"))
		atVersion := &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: at, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}}
		if err := b.hub.Client.List(ctx, &works, client.MatchingLabels{musterv1.FleetJobUIDLabel: uid}, atVersion); err != nil {
			return 0, fmt.Errorf("counting the Works of %s: %w", uid, err)
		}
		want += len(works.Items)
	}
	_, err := waitFor(ctx, start, b.o.timeout, fmt.Sprintf("%d Works", want), func() bool { return b.watch.worksOf(uids...) >= want })
	return want, err
}

// allScheduled returns, once every one of jobs is Scheduled (the hub created all their
// Works before), each one's resource version by UID; nil until then.
func (b *bench) allScheduled(ctx context.Context, jobs []*musterv1.FleetJob) map[string]string {
	at := map[string]string{}
	for _, j := range jobs {
		var fj musterv1.FleetJob
		if err := b.hub.Client.Get(ctx, client.ObjectKeyFromObject(j), &fj); err != nil ||
			!meta.IsStatusConditionTrue(fj.Status.Conditions, musterv1.FleetJobScheduled) {
			return nil
		}
		at[string(fj.UID)] = fj.ResourceVersion
	}
	return at
}

func (b *bench) allComplete(ctx context.Context, jobs []*musterv1.FleetJob) bool {
	for _, j := range jobs {
		var fj musterv1.FleetJob
		if err := b.hub.Client.Get(ctx, client.ObjectKeyFromObject(j), &fj); err != nil || fj.Status.Phase != musterv1.JobComplete {
			return false
		}
	}
	return true
}

// floor is how long n creates of ConfigMaps as large as a shard's Job take from
// -parallel goroutines with the bench's admin client: what the API server's write rate
// allows without the hub's own work (its decisions, its webhook), the physical floor of
// writing n Works.
func (b *bench) floor(ctx context.Context, n int) (time.Duration, error) {
	// A Work carries the shard's Job, which is about the size of the FleetJob's template.
	raw, err := json.Marshal(fleetsim.DividedJob(metav1.NamespaceDefault, "floor", b.o.members).Spec.Template)
	if err != nil {
		return 0, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "scale-floor-"}}
	if err := b.hub.Client.Create(ctx, ns); err != nil {
		return 0, err
	}
	defer func() { _ = b.hub.Client.Delete(context.WithoutCancel(ctx), ns) }()
	maps := make([]*corev1.ConfigMap, n)
	for i := range maps {
		maps[i] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: fmt.Sprintf("work-%d", i)}, Data: map[string]string{"spec": string(raw)}}
	}
	// The floor is the API server's, not a client's: no client-side rate limit.
	cfg := rest.CopyConfig(b.hub.Config)
	cfg.QPS = -1
	c, err := client.New(cfg, client.Options{Scheme: b.hub.Client.Scheme()})
	if err != nil {
		return 0, err
	}
	start := time.Now()
	err = forEachLimit(ctx, maps, b.o.parallel, func(ctx context.Context, cm *corev1.ConfigMap) error { return c.Create(ctx, cm) })
	return time.Since(start), err
}

// storageBytes is the size of the hub API server's storage (etcd's database), from its
// own metrics.
func (b *bench) storageBytes(ctx context.Context) (float64, error) {
	families, err := framework.APIServerMetrics(ctx, b.hub)
	if err != nil {
		return 0, err
	}
	total := 0.0
	for _, m := range families["apiserver_storage_size_bytes"].GetMetric() {
		total += m.GetGauge().GetValue()
	}
	return total, nil
}

// forEach runs fn on every item at once and returns the first error.
func forEach[T any](ctx context.Context, items []T, fn func(context.Context, T) error) error {
	return forEachLimit(ctx, items, len(items), fn)
}

// forEachLimit runs fn on every item, limit at once, and returns the first error.
func forEachLimit[T any](ctx context.Context, items []T, limit int, fn func(context.Context, T) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, limit))
	for _, item := range items {
		g.Go(func() error { return fn(ctx, item) })
	}
	return g.Wait()
}

func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func round(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
