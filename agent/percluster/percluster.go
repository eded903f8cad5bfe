// Package percluster is what the agent's member-side reconcilers share about the
// clusters they reconcile: which ones they engage, and what they hold for each (its
// client and recorder, and the state, expectations and backoff, that only makes sense
// within one cluster). The agent engages one cluster, its own member; the same
// reconcilers hosted on the hub would engage many.
package percluster

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/cluster"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
)

// The agent runs its member's objects, never the hub's: every For, Owns and Watches of a
// member-side reconciler takes both options, which engage the manager's local cluster
// (the member) and none of the provider's (the hub).
var (
	EngageLocal     = mcbuilder.WithEngageWithLocalCluster(true)
	IgnoreProviders = mcbuilder.WithEngageWithProviderClusters(false)
)

// Clusters finds a cluster by the name a request carries; mcmanager.Manager is one.
type Clusters interface {
	GetCluster(ctx context.Context, name multicluster.ClusterName) (cluster.Cluster, error)
}

// Store holds one value per cluster, made by New on the cluster's first request. A value
// belongs to the cluster it was made for: when a name comes back with another cluster (a
// member that left and joined again), the old value and what it remembered are dropped.
type Store[T any] struct {
	New func(cluster.Cluster) T

	mu     sync.Mutex
	byName map[multicluster.ClusterName]entry[T]
}

type entry[T any] struct {
	cluster cluster.Cluster
	value   T
}

// Get returns the value of the cluster named name, as clusters knows it now. A cluster
// that is gone takes its value with it; the error wraps multicluster.ErrClusterNotFound.
func (s *Store[T]) Get(ctx context.Context, clusters Clusters, name multicluster.ClusterName) (T, error) {
	cl, err := clusters.GetCluster(ctx, name)
	if err != nil {
		if errors.Is(err, multicluster.ErrClusterNotFound) {
			s.forget(name)
		}
		var zero T
		return zero, fmt.Errorf("cluster %q: %w", name, err)
	}
	return s.valueOf(name, cl), nil
}

func (s *Store[T]) valueOf(name multicluster.ClusterName, cl cluster.Cluster) T {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.byName[name]; ok && e.cluster == cl {
		return e.value
	}
	if s.byName == nil {
		s.byName = map[multicluster.ClusterName]entry[T]{}
	}
	e := entry[T]{cluster: cl, value: s.New(cl)}
	s.byName[name] = e
	return e.value
}

func (s *Store[T]) forget(name multicluster.ClusterName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byName, name)
}

// IgnoreGone drops the error of a request for a cluster that is no longer engaged: its
// objects went with it, so there is nothing left to reconcile or to retry.
func IgnoreGone(err error) error {
	if errors.Is(err, multicluster.ErrClusterNotFound) {
		return nil
	}
	return err
}
