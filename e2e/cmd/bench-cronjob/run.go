package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

// sighting is a child seen in the watch: its slot (from its annotation) and when it came.
type sighting struct {
	name       string
	slot, seen time.Time
}

// watcher records every child either controller creates, by namespace.
type watcher struct {
	mu   sync.Mutex
	byNS map[string][]sighting
}

func (w *watcher) observe(o client.Object, annotation string) {
	seen := time.Now()
	slot, err := time.Parse(time.RFC3339, o.GetAnnotations()[annotation])
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.byNS[o.GetNamespace()] = append(w.byNS[o.GetNamespace()], sighting{name: o.GetName(), slot: slot, seen: seen})
}

// within returns the children of ns seen so far whose slot lies in [from, to].
func (w *watcher) within(ns string, from, to time.Time) []sighting {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(w.byNS[ns]), func(s sighting) bool { return s.slot.Before(from) || s.slot.After(to) })
}

// watchChildren starts watching the children: Jobs (kube-controller-manager's CronJobs)
// and FleetJobs (the hub's FleetCronJobs).
func watchChildren(ctx context.Context, hubCluster *framework.Cluster) (*watcher, error) {
	informers, err := cache.New(hubCluster.Config, cache.Options{Scheme: hubCluster.Client.Scheme()})
	if err != nil {
		return nil, err
	}
	w := &watcher{byNS: map[string][]sighting{}}
	for _, c := range []struct {
		obj        client.Object
		annotation string
	}{
		{&batchv1.Job{}, kcmScheduledAnnotation},
		{&musterv1.FleetJob{}, musterv1.ScheduledTimeAnnotation},
	} {
		inf, err := informers.GetInformer(ctx, c.obj)
		if err != nil {
			return nil, err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
			if o, ok := obj.(client.Object); ok {
				w.observe(o, c.annotation)
			}
		}}); err != nil {
			return nil, err
		}
	}
	go func() { _ = informers.Start(ctx) }()
	if !informers.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("watching the children did not start")
	}
	return w, nil
}

// measure runs one side's crons in a namespace of their own over o.slots slots and
// returns the lag of their children; it deletes the crons and children again.
func measure(ctx context.Context, hubCluster *framework.Cluster, m *framework.Muster, w *watcher, s side, run int, o options) (result, error) {
	r := result{run: run}
	ns, err := namespace(ctx, hubCluster, s, run)
	if err != nil {
		return r, err
	}
	mark, err := phaseMark(ctx, hubCluster, m, o.phases)
	if err != nil {
		return r, err
	}
	started := time.Now()
	if _, err := parallel(ctx, o.crons, cronCreators, func(ctx context.Context, i int) error {
		return createPatiently(ctx, hubCluster.Client, newCron(s.controller, ns, i))
	}); err != nil {
		return r, fmt.Errorf("creating the %s crons: %w", s, err)
	}
	first := firstSlot(time.Now(), 20*time.Second)
	last := first.Add(time.Duration(o.slots-1) * time.Minute)
	fmt.Printf("==> run %d %s: %d crons created in %.1fs; measuring the slots %s to %s\n",
		run, s, o.crons, time.Since(started).Seconds(), first.Format("15:04"), last.Format("15:04"))
	want := o.crons * o.slots
	var seen []sighting
	if err := framework.Until(ctx, time.Until(last.Add(window(o.crons))), "every child", func(context.Context) (bool, string, error) {
		seen = w.within(ns, first, last)
		return len(seen) >= want, fmt.Sprintf("%d of %d children", len(seen), want), nil
	}); err != nil && ctx.Err() != nil {
		return r, err
	}
	seen = w.within(ns, first, last)
	r.summarize(seen, want)
	fmt.Printf("    %d/%d children; lag P50 %.0f ms, P99 %.0f ms, max %.0f ms\n", r.children, want, ms(r.p50), ms(r.p99), ms(r.max))
	if o.phases {
		if err := printPhases(ctx, hubCluster, m, mark, s.controller, ns, seen); err != nil {
			return r, err
		}
	}
	return r, clean(ctx, hubCluster.Client, s.controller, ns)
}

// window is how long after the last measured slot a run waits for its children: 30 s,
// and 10 ms more for each cron past 1,000, so that a controller slower than the bench's
// patience at 5,000 crons is measured, not cut off (a child never seen counts as the
// longest lag seen).
func window(crons int) time.Duration {
	return 30*time.Second + time.Duration(max(crons-1000, 0))*10*time.Millisecond
}

// cronCreators create a run's crons: few enough that the hub's webhook (which checks each
// template with a dry-run) keeps up on a busy machine.
const cronCreators = 8

// createPatiently creates obj, retrying for a minute while the API server or the hub's
// webhook (just restarted, or slow) refuses it.
func createPatiently(ctx context.Context, c client.Client, obj client.Object) error {
	var err error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		if err = c.Create(ctx, obj); err == nil || apierrors.IsAlreadyExists(err) || ctx.Err() != nil {
			return client.IgnoreAlreadyExists(err)
		}
	}
	return err
}

// clean deletes a run's crons, then their children, and waits until the children are gone,
// so that the next run's slot does not share the API server with their deletion.
func clean(ctx context.Context, c client.Client, side, ns string) error {
	cron, child, children := client.Object(&batchv1.CronJob{}), client.Object(&batchv1.Job{}), client.ObjectList(&batchv1.JobList{})
	if side == muster {
		cron, child, children = &musterv1.FleetCronJob{}, &musterv1.FleetJob{}, &musterv1.FleetJobList{}
	}
	return deleteAll(ctx, c, ns, children, cron, child)
}

// deleteAll deletes every object of the kinds given in ns, one call per object from
// deleters goroutines, and waits until list is empty. One DeleteAllOf of thousands of
// objects runs longer than the API server keeps a request open (it reset the stream at
// 5,000 crons), and the bench must end clean whatever the count.
func deleteAll(ctx context.Context, c client.Client, ns string, list client.ObjectList, kinds ...client.Object) error {
	deleted := 0
	for _, kind := range kinds {
		objs, err := metadataOf(ctx, c, kind, ns)
		if err != nil {
			return err
		}
		deleted += len(objs)
		if _, err := parallel(ctx, len(objs), deleters, func(ctx context.Context, i int) error {
			return client.IgnoreNotFound(c.Delete(ctx, &objs[i], client.PropagationPolicy(metav1.DeletePropagationBackground)))
		}); err != nil {
			return fmt.Errorf("deleting the %T in %s: %w", kind, ns, err)
		}
	}
	return framework.Until(ctx, 2*time.Minute+time.Duration(deleted)*10*time.Millisecond, "the deletion of "+ns+"'s objects", func(ctx context.Context) (bool, string, error) {
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, err.Error(), nil
		}
		n := meta.LenList(list)
		return n == 0, fmt.Sprintf("%d left", n), nil
	})
}

// deleters is how many deletes deleteAll keeps in flight.
const deleters = 16

// metadataOf lists the objects of kind in ns, their metadata only, 500 to a page.
func metadataOf(ctx context.Context, c client.Client, kind client.Object, ns string) ([]metav1.PartialObjectMetadata, error) {
	gvk, err := c.GroupVersionKindFor(kind)
	if err != nil {
		return nil, err
	}
	var objs []metav1.PartialObjectMetadata
	page := &metav1.PartialObjectMetadataList{}
	page.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	for {
		if err := c.List(ctx, page, client.InNamespace(ns), client.Limit(500), client.Continue(page.Continue)); err != nil {
			return nil, fmt.Errorf("listing the %s in %s: %w", gvk.Kind, ns, err)
		}
		for _, o := range page.Items {
			o.SetGroupVersionKind(gvk)
			objs = append(objs, o)
		}
		if page.Continue == "" {
			return objs, nil
		}
	}
}

// parallel runs f for 0..n-1 on workers goroutines and returns when each call returned,
// measured from the start.
func parallel(ctx context.Context, n, workers int, f func(context.Context, int) error) ([]time.Duration, error) {
	start := time.Now()
	done := make([]time.Duration, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(func() {
			for i := range next {
				errs[i] = f(ctx, i)
				done[i] = time.Since(start)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return done, nil
}

func newCron(side, ns string, i int) client.Object {
	name := fmt.Sprintf("cron-%03d", i)
	if side == muster {
		return &musterv1.FleetCronJob{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: musterv1.FleetCronJobSpec{
				Schedule:          schedule,
				ConcurrencyPolicy: musterv1.ConcurrencyAllow,
				JobTemplate:       &musterv1.FleetJobTemplateSpec{Spec: musterv1.FleetJobSpec{Template: batchv1.JobTemplateSpec{Spec: jobSpec()}}},
			},
		}
	}
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: batchv1.CronJobSpec{
			Schedule:          schedule,
			ConcurrencyPolicy: batchv1.AllowConcurrent,
			JobTemplate:       batchv1.JobTemplateSpec{Spec: jobSpec()},
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
