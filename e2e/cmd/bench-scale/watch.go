package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

// fleetWatch follows, through one watch each, every MemberCluster's Available condition
// and every Work the hub writes.
type fleetWatch struct {
	mu sync.Mutex
	// available is whether each cluster is Available=True now.
	available map[string]bool
	// lost counts, by cluster, the times a cluster that had been Available stopped being.
	lost map[string]int
	// lostAt is when each cluster last stopped being Available.
	lostAt map[string]time.Time
	// works holds, for each FleetJob or BroadcastJob UID, when each of its Works (by
	// name) was first seen.
	works map[string]map[string]time.Time
}

func watchFleet(ctx context.Context, hub *framework.Cluster) (*fleetWatch, error) {
	informers, err := cache.New(hub.Config, cache.Options{Scheme: hub.Client.Scheme()})
	if err != nil {
		return nil, err
	}
	w := &fleetWatch{available: map[string]bool{}, lost: map[string]int{}, lostAt: map[string]time.Time{}, works: map[string]map[string]time.Time{}}
	clusters, err := informers.GetInformer(ctx, &musterv1.MemberCluster{})
	if err != nil {
		return nil, err
	}
	onCluster := func(obj any) {
		if mc, ok := obj.(*musterv1.MemberCluster); ok {
			w.observeCluster(mc)
		}
	}
	if _, err := clusters.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: onCluster, UpdateFunc: func(_, obj any) { onCluster(obj) }}); err != nil {
		return nil, err
	}
	works, err := informers.GetInformer(ctx, &musterv1.Work{})
	if err != nil {
		return nil, err
	}
	if _, err := works.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if o, ok := obj.(client.Object); ok {
			uid := o.GetLabels()[musterv1.FleetJobUIDLabel]
			if uid == "" {
				uid = o.GetLabels()[musterv1.BroadcastJobUIDLabel]
			}
			seen := time.Now()
			w.mu.Lock()
			if w.works[uid] == nil {
				w.works[uid] = map[string]time.Time{}
			}
			w.works[uid][o.GetNamespace()+"/"+o.GetName()] = seen
			w.mu.Unlock()
		}
	}}); err != nil {
		return nil, err
	}
	go func() { _ = informers.Start(ctx) }()
	if !informers.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the hub's MemberClusters and Works did not sync")
	}
	return w, nil
}

func (w *fleetWatch) observeCluster(mc *musterv1.MemberCluster) {
	now := meta.IsStatusConditionTrue(mc.Status.Conditions, musterv1.MemberClusterAvailable)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.available[mc.Name] && !now {
		w.lost[mc.Name]++
		w.lostAt[mc.Name] = time.Now()
	}
	w.available[mc.Name] = now
}

// availableCount is how many clusters are Available now.
func (w *fleetWatch) availableCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, ok := range w.available {
		if ok {
			n++
		}
	}
	return n
}

// falseUnknowns is how many times a cluster other than those in expected stopped being
// Available.
func (w *fleetWatch) falseUnknowns(expected ...string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for name, times := range w.lost {
		if !slices.Contains(expected, name) {
			n += times
		}
	}
	return n
}

// lostSince is when cluster stopped being Available, if it did after since.
func (w *fleetWatch) lostSince(cluster string, since time.Time) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	at, ok := w.lostAt[cluster]
	return at, ok && at.After(since)
}

// worksOf is how many Works were written for the FleetJobs with these UIDs.
func (w *fleetWatch) worksOf(uids ...string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, uid := range uids {
		n += len(w.works[uid])
	}
	return n
}

// lastWorkSeen is when the last Work of the jobs with these UIDs was first seen.
func (w *fleetWatch) lastWorkSeen(uids ...string) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last time.Time
	for _, uid := range uids {
		for _, seen := range w.works[uid] {
			if seen.After(last) {
				last = seen
			}
		}
	}
	return last
}

// errMissed is a scenario's wait that ran past -timeout: the run prints what the
// scenario reached and goes on to the next, rather than ending.
var errMissed = errors.New("missed the scenario's time limit")

// waitFor polls cond every 100 ms until it holds, and returns how long that took from
// start; an error once timeout has passed since start.
func waitFor(ctx context.Context, start time.Time, timeout time.Duration, what string, cond func() bool) (time.Duration, error) {
	for !cond() {
		if time.Since(start) > timeout {
			return 0, fmt.Errorf("%s: not within %s: %w", what, timeout, errMissed)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return time.Since(start), nil
}
