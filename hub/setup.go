package hub

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/podsecurity"
	"github.com/musterhq/muster/hub/broadcastjob"
	"github.com/musterhq/muster/hub/cronjob"
	"github.com/musterhq/muster/hub/fleetjob"
	"github.com/musterhq/muster/hub/health"
	"github.com/musterhq/muster/hub/internal/failover"
	"github.com/musterhq/muster/hub/inventory"
	hubmetrics "github.com/musterhq/muster/hub/metrics"
	"github.com/musterhq/muster/hub/nodeslice"
	"github.com/musterhq/muster/hub/registration"
	"github.com/musterhq/muster/hub/workloadspread"
	"github.com/musterhq/muster/internal/version"
	"github.com/musterhq/muster/placement/clusters"
)

// Controllers are the hub's running parts that other controllers and tests reach into.
type Controllers struct {
	Inventory *inventory.Inventory
}

// Setup registers every hub controller with mgr. Both the muster-hub binary and the
// integration tests call it.
func Setup(_ context.Context, mgr ctrl.Manager, opts *Options) (*Controllers, error) {
	cs, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return nil, err
	}
	level, err := podsecurity.ParseDefaultLevel(opts.DefaultPodSecurityLevel)
	if err != nil {
		return nil, err
	}
	inv := inventory.New()
	gate := failover.New(clock.RealClock{}, opts.EvictionRate, opts.UnhealthyClusterThreshold, opts.DefaultUnreachableTolerationSeconds)
	gate.Fencing = clusters.Fencing{Grace: opts.ClusterGracePeriod, Margin: opts.FencingMargin}
	if err := mgr.Add(gate.Runnable()); err != nil {
		return nil, fmt.Errorf("adding the failover gate: %w", err)
	}
	// NodeSlices stream into the inventory past the manager's cache, which would keep
	// them whole beside it.
	slices, err := client.NewWithWatch(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return nil, fmt.Errorf("a client for NodeSlices: %w", err)
	}
	heartbeats := &health.Reconciler{
		Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("muster-health"), Clock: clock.RealClock{}, GracePeriod: opts.ClusterGracePeriod,
		HubVersion: version.Get(),
	}
	// When the hub itself is cut off every agent goes quiet within a heartbeat, but their
	// taints come one by one: the gate counts a cluster quiet for half the grace period
	// (two missed renewals at the defaults) as unreachable already.
	gate.Quiet = func(cluster string) bool {
		d, ok := heartbeats.QuietFor(cluster, time.Now())
		return ok && d > opts.ClusterGracePeriod/2
	}
	setups := []struct {
		name  string
		setup func(ctrl.Manager) error
	}{
		{"registration", (&registration.Reconciler{
			Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("muster-registration"), AutoAccept: opts.AutoAcceptClusters,
			MaxNodesPerMember: opts.MaxNodesPerMember,
		}).SetupWithManager},
		{"csr-approver", (&registration.Approver{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Clientset: cs, AutoAccept: opts.AutoAcceptClusters,
			Recorder: mgr.GetEventRecorder("muster-csr-approver"), MaxCertificateLifetime: opts.MaxAgentCertificateLifetime,
		}).SetupWithManager},
		{"health", heartbeats.SetupWithManager},
		{"inventory", (&nodeslice.Loader{Client: slices, Inventory: inv}).SetupWithManager},
		{"fleetjob", (&fleetjob.Reconciler{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("muster-fleetjob"), Clock: clock.RealClock{}, Inventory: inv,
			UnschedulableWindow: opts.SpreadUnschedulableWindow, PodSecurityLevel: level, Failover: gate, Workers: opts.FleetJobWorkers,
		}).SetupWithManager},
		{"workloadspread", (&workloadspread.Reconciler{
			Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("muster-workloadspread"), Clock: clock.RealClock{},
			UnschedulableWindow: opts.SpreadUnschedulableWindow,
		}).SetupWithManager},
		{"fleetcronjob", (&cronjob.Reconciler{
			Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("muster-fleetcronjob"), Clock: clock.RealClock{}, Workers: opts.CronJobWorkers,
		}).SetupWithManager},
		{"broadcastjob", (&broadcastjob.Reconciler{
			Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("muster-broadcastjob"), Clock: clock.RealClock{}, Inventory: inv,
			PodSecurityLevel: level, Failover: gate, Workers: opts.BroadcastJobWorkers,
		}).SetupWithManager},
	}
	if err := hubmetrics.RegisterFleet(mgr.GetClient(), health.LeaseName, time.Now, heartbeats.SeenAt); err != nil {
		return nil, fmt.Errorf("registering the fleet metrics: %w", err)
	}
	for _, s := range setups {
		if err := s.setup(mgr); err != nil {
			return nil, fmt.Errorf("setting up the %s controller: %w", s.name, err)
		}
	}
	return &Controllers{Inventory: inv}, nil
}
