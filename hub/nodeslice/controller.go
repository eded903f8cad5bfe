// Package nodeslice loads the NodeSlices that agents write into the hub's inventory.
//
// The Loader lists NodeSlices a page at a time and then watches them, laying each slice
// into the inventory's compact rows as it arrives and dropping it. The hub keeps no copy
// of whole NodeSlices, neither a cache beside the inventory (at a thousand members of a
// thousand nodes that was most of its memory) nor a list held whole until it is complete,
// as an informer's reflector holds it.
//
// A slice's cluster is taken from its namespace (muster-member-<cluster>), never from its
// content, because an agent can write only in its own namespace: no agent can place nodes
// in another cluster's inventory.
package nodeslice

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/inventory"
)

// +kubebuilder:rbac:groups=muster.dev,resources=nodeslices,verbs=get;list;watch

// pageSize bounds how many NodeSlices one page of a list holds, and with it the memory a
// list takes while it is decoded: 50 slices of at most 500 nodes.
const pageSize = 50

// Loader streams NodeSlices into the Inventory.
type Loader struct {
	// Client lists and watches NodeSlices; not the manager's cached client, which would
	// keep every slice whole.
	Client    client.WithWatch
	Inventory *inventory.Inventory
}

// SetupWithManager runs the loader with the manager, on the leader (which places work).
func (l *Loader) SetupWithManager(mgr ctrl.Manager) error {
	return mgr.Add(manager.RunnableFunc(l.Start))
}

// Start loads slices until ctx ends: a list, then a watch from the list's version,
// watched again from the last version seen when the API server ends it, listed again when
// that version is too old to watch from. Failures are retried with a backoff.
func (l *Loader) Start(ctx context.Context) error {
	logger := ctrl.LoggerFrom(ctx).WithName("nodeslices")
	store := &Store{Inventory: l.Inventory, Log: logger}
	retry := wait.Backoff{Duration: time.Second, Factor: 2, Steps: 6, Cap: 30 * time.Second}
	backoff := retry
	version := ""
	for ctx.Err() == nil {
		var err error
		if version == "" {
			version, err = l.list(ctx, store)
		}
		if err == nil {
			version, err = l.watch(ctx, store, version)
		}
		switch {
		case err == nil || ctx.Err() != nil:
			backoff = retry
			continue
		case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
			version = ""
			continue
		}
		delay := backoff.Step()
		logger.Error(err, "loading NodeSlices; retrying", "after", delay)
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
	}
	return nil
}

// list loads every slice, a page at a time, drops the slices the inventory holds that
// are gone, and returns the list's resource version.
func (l *Loader) list(ctx context.Context, store *Store) (string, error) {
	listed := map[string]bool{}
	next := ""
	for {
		var page musterv1.NodeSliceList
		if err := l.Client.List(ctx, &page, client.Limit(pageSize), client.Continue(next)); err != nil {
			return "", fmt.Errorf("listing NodeSlices: %w", err)
		}
		for i := range page.Items {
			slice := &page.Items[i]
			if err := store.Add(slice); err != nil {
				return "", err
			}
			listed[slice.Namespace+"/"+slice.Name] = true
		}
		if next = page.Continue; next == "" {
			return page.ResourceVersion, store.keepOnly(listed)
		}
	}
}

// watch loads what a watch from version brings until it ends, and returns the last
// version it saw.
func (l *Loader) watch(ctx context.Context, store *Store, version string) (string, error) {
	w, err := l.Client.Watch(ctx, &musterv1.NodeSliceList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: version, AllowWatchBookmarks: true}})
	if err != nil {
		return version, fmt.Errorf("watching NodeSlices: %w", err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			return version, fmt.Errorf("watching NodeSlices: %w", apierrors.FromObject(ev.Object))
		}
		slice, ok := ev.Object.(*musterv1.NodeSlice)
		if !ok {
			continue
		}
		switch ev.Type {
		case watch.Added, watch.Modified:
			err = store.Add(slice)
		case watch.Deleted:
			err = store.Delete(slice)
		}
		if err != nil {
			return version, err
		}
		version = slice.ResourceVersion
	}
	return version, nil
}

// Store keeps NodeSlices only as the inventory's rows.
type Store struct {
	Inventory *inventory.Inventory
	Log       logr.Logger
}

// Add loads a slice that appeared or changed, in place of what it held before.
func (s *Store) Add(slice *musterv1.NodeSlice) error { return s.load(slice) }

// Delete drops every node a slice held.
func (s *Store) Delete(slice *musterv1.NodeSlice) error {
	return s.Inventory.DeleteSlice(slice.Namespace, slice.Name)
}

// keepOnly drops the slices the inventory holds that are not listed: those deleted while
// no watch ran.
func (s *Store) keepOnly(listed map[string]bool) error {
	for _, key := range s.Inventory.SliceKeys() {
		if listed[key] {
			continue
		}
		namespace, name, _ := strings.Cut(key, "/")
		if err := s.Inventory.DeleteSlice(namespace, name); err != nil {
			return err
		}
	}
	return nil
}

// load mirrors one slice into the inventory, under its namespace's cluster.
func (s *Store) load(slice *musterv1.NodeSlice) error {
	cluster, ok := strings.CutPrefix(slice.Namespace, musterv1.MemberNamespacePrefix)
	if !ok || cluster == "" {
		// Only agents write NodeSlices, and only in their member namespace.
		return nil
	}
	if slice.ClusterName != cluster {
		s.Log.Info("NodeSlice names another cluster than its namespace; using the namespace's",
			"nodeSlice", client.ObjectKeyFromObject(slice), "clusterName", slice.ClusterName, "cluster", cluster)
	}
	return s.Inventory.ReplaceSlice(cluster, slice)
}
