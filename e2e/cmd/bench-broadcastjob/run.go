package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/e2e/framework"
)

// runResult is one side's run: seconds from the job's creation to every pod created, every
// pod bound to its node and the job Complete; the write requests the member's API server
// served meanwhile; the controller's CPU time.
type runResult struct {
	side                     string
	run                      int
	created, bound, complete time.Duration
	// succeeded is when the last pod succeeded: what is left until complete is the
	// controller seeing it and writing the status.
	succeeded time.Duration
	writes    writeCounts
	cpu       time.Duration
}

// writeCounts are write requests by resource: the BroadcastJobs (any group, status
// included), pods (not their status or binding, which kwok and the scheduler write) and
// core events (the scheduler writes events.k8s.io ones). Between runs nothing else writes
// these, so each side's are its controller's own.
type writeCounts struct{ jobs, pods, events float64 }

func (w writeCounts) total() float64 { return w.jobs + w.pods + w.events }

func countWrites(ctx context.Context, member *framework.Cluster) (writeCounts, error) {
	series, err := framework.APIWrites(ctx, member)
	if err != nil {
		return writeCounts{}, err
	}
	var w writeCounts
	for _, s := range series {
		switch {
		case s.Resource == "broadcastjobs":
			w.jobs += s.Count
		case s.Resource == "pods" && s.Subresource == "":
			w.pods += s.Count
		case s.Resource == "events" && s.Group == "":
			w.events += s.Count
		}
	}
	return w, nil
}

// measureRun runs one side's BroadcastJob over want nodes of member in a namespace of its
// own, then deletes the namespace and waits until it is gone.
func measureRun(ctx context.Context, member *framework.Cluster, s side, run, want int) (runResult, error) {
	r := runResult{side: s.name(), run: run}
	ns := fmt.Sprintf("bench-%s-%d", s.name(), run)
	if err := createNamespace(ctx, member, ns); err != nil {
		return r, err
	}
	defer func() {
		if err := deleteNamespace(context.WithoutCancel(ctx), member, ns); err != nil {
			fmt.Fprintln(os.Stderr, "cleaning up:", err)
		}
	}()
	pid, stop, err := s.start(ctx)
	if err != nil {
		return r, err
	}
	defer stop()
	pods, stopPods, err := watchPods(ctx, member, ns, want)
	if err != nil {
		return r, err
	}
	defer stopPods()
	before, err := countWrites(ctx, member)
	if err != nil {
		return r, err
	}
	cpuBefore, err := processCPU(pid)
	if err != nil {
		return r, err
	}
	start := time.Now()
	pods.begin(start)
	if err := s.create(ctx, member.Client, ns); err != nil {
		return r, err
	}
	err = framework.Until(ctx, 10*time.Minute, s.name()+"'s BroadcastJob to complete", func(ctx context.Context) (bool, string, error) {
		done, err := s.complete(ctx, member.Client, ns, want)
		return done, pods.String(), err
	})
	if err != nil {
		return r, err
	}
	r.complete = time.Since(start)
	r.created, r.bound, r.succeeded = pods.times()
	// Let the last status write and events land before counting.
	time.Sleep(3 * time.Second)
	after, err := countWrites(ctx, member)
	if err != nil {
		return r, err
	}
	cpuAfter, err := processCPU(pid)
	if err != nil {
		return r, err
	}
	r.writes = writeCounts{after.jobs - before.jobs, after.pods - before.pods, after.events - before.events}
	r.cpu = cpuAfter - cpuBefore
	return r, nil
}

func createNamespace(ctx context.Context, member *framework.Cluster, ns string) error {
	if err := member.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	return framework.Until(ctx, time.Minute, ns+"'s default service account", func(ctx context.Context) (bool, string, error) {
		err := member.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, fmt.Sprint(err), nil
	})
}

// deleteNamespace deletes ns with its job and pods and waits until it is gone, so that the
// next run starts on an idle cluster.
func deleteNamespace(ctx context.Context, member *framework.Cluster, ns string) error {
	if err := member.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return framework.Until(ctx, 5*time.Minute, "namespace "+ns+" to be deleted", func(ctx context.Context) (bool, string, error) {
		err := member.Client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		return apierrors.IsNotFound(err), fmt.Sprint(err), nil
	})
}

// podTimes records when the pods of a run were all created and all bound, as a watch on
// the namespace sees them.
type podTimes struct {
	mu              sync.Mutex
	want            int
	start           time.Time
	bound           map[string]bool
	boundCount      int
	succeeded       map[string]bool
	created, allSet time.Duration
	allSucceeded    time.Duration
}

func (p *podTimes) begin(t time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.start = t
}

func (p *podTimes) observe(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, seen := p.bound[pod.Name]; !seen {
		p.bound[pod.Name] = false
		if len(p.bound) == p.want {
			p.created = time.Since(p.start)
		}
	}
	if pod.Spec.NodeName != "" && !p.bound[pod.Name] {
		p.bound[pod.Name] = true
		p.boundCount++
		if p.boundCount == p.want {
			p.allSet = time.Since(p.start)
		}
	}
	if pod.Status.Phase == corev1.PodSucceeded && !p.succeeded[pod.Name] {
		p.succeeded[pod.Name] = true
		if len(p.succeeded) == p.want {
			p.allSucceeded = time.Since(p.start)
		}
	}
}

func (p *podTimes) times() (created, bound, succeeded time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.created, p.allSet, p.allSucceeded
}

func (p *podTimes) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("%d pods, %d bound", len(p.bound), p.boundCount)
}

// watchPods starts an informer on ns's pods feeding a podTimes.
func watchPods(ctx context.Context, member *framework.Cluster, ns string, want int) (*podTimes, func(), error) {
	p := &podTimes{want: want, start: time.Now(), bound: map[string]bool{}, succeeded: map[string]bool{}}
	factory := informers.NewSharedInformerFactoryWithOptions(member.Clientset, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    p.observe,
		UpdateFunc: func(_, obj any) { p.observe(obj) },
	}); err != nil {
		return nil, nil, err
	}
	stopCh := make(chan struct{})
	factory.Start(stopCh)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		close(stopCh)
		return nil, nil, fmt.Errorf("watching the pods of %s: %w", ns, ctx.Err())
	}
	return p, func() { close(stopCh); factory.Shutdown() }, nil
}

// processCPU is the user and system CPU time a process has used, from /proc.
func processCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(raw)
	// Fields after the command name, which is in parentheses and may hold spaces; utime
	// and stime are the 14th and 15th fields of the whole line.
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	var utime, stime int64
	if _, err := fmt.Sscan(fields[11], &utime); err != nil {
		return 0, err
	}
	if _, err := fmt.Sscan(fields[12], &stime); err != nil {
		return 0, err
	}
	// Linux reports clock ticks of 1/100 s (USER_HZ) on every architecture Go supports here.
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}
