package main

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

// side is one BroadcastJob controller of the side-by-side runs.
type side interface {
	name() string
	// start readies the controller for a run and returns its process id (for its CPU time)
	// and what ends the run.
	start(ctx context.Context) (pid int, stop func(), err error)
	// create creates the run's BroadcastJob, named bench, in ns.
	create(ctx context.Context, c client.Client, ns string) error
	// complete reports whether the job in ns is Complete with want pods succeeded; a
	// failed job is an error.
	complete(ctx context.Context, c client.Client, ns string, want int) (bool, error)
}

// musterSide is the agent's BroadcastJob controller, which runs all along.
type musterSide struct {
	agent    *framework.Process
	selector map[string]string
}

func (m musterSide) name() string { return "muster" }

func (m musterSide) start(context.Context) (int, func(), error) {
	return m.agent.Pid(), func() {}, nil
}

func (m musterSide) create(ctx context.Context, c client.Client, ns string) error {
	j := job("bench", nil, m.selector)
	j.Namespace = ns
	return c.Create(ctx, j)
}

func (m musterSide) complete(ctx context.Context, c client.Client, ns string, want int) (bool, error) {
	var j musterv1.BroadcastJob
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "bench"}, &j); err != nil {
		return false, nil
	}
	switch j.Status.Phase {
	case musterv1.BroadcastJobFailedPh:
		return false, fmt.Errorf("muster's BroadcastJob failed: %+v", j.Status.Conditions)
	case musterv1.BroadcastJobCompleted:
		if int(j.Status.Succeeded) != want {
			return false, fmt.Errorf("muster's BroadcastJob completed with %d succeeded, want %d", j.Status.Succeeded, want)
		}
		return true, nil
	}
	return false, nil
}

// kruiseSide is kruise-manager, started afresh for each run in one binding mode.
type kruiseSide struct {
	manager     *kruiseManager
	byScheduler bool
	selector    map[string]string
}

func (k kruiseSide) name() string {
	if k.byScheduler {
		return "kruise-scheduler"
	}
	return "kruise-nodename"
}

func (k kruiseSide) start(ctx context.Context) (int, func(), error) {
	p, err := k.manager.start(ctx, k.byScheduler)
	if err != nil {
		return 0, nil, err
	}
	return p.Pid(), p.Stop, nil
}

func (k kruiseSide) create(ctx context.Context, c client.Client, ns string) error {
	return c.Create(ctx, kruiseJob(ns, k.selector))
}

func (k kruiseSide) complete(ctx context.Context, c client.Client, ns string, want int) (bool, error) {
	phase, succeeded, err := kruisePhase(ctx, c, ns)
	if err != nil {
		return false, nil
	}
	switch phase {
	case "failed":
		return false, fmt.Errorf("kruise's BroadcastJob failed")
	case "completed":
		if int(succeeded) != want {
			return false, fmt.Errorf("kruise's BroadcastJob completed with %d succeeded, want %d", succeeded, want)
		}
		return true, nil
	}
	return false, nil
}
