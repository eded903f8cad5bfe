package agent

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/musterhq/muster/agent/broadcastjob"
	"github.com/musterhq/muster/agent/eventrelay"
	"github.com/musterhq/muster/agent/heartbeat"
	"github.com/musterhq/muster/agent/inventory"
	"github.com/musterhq/muster/agent/job"
	agentmetrics "github.com/musterhq/muster/agent/metrics"
	"github.com/musterhq/muster/agent/registration"
	"github.com/musterhq/muster/agent/worksync"
	"github.com/musterhq/muster/api/scheme"
)

// HubClusterName is the name under which the agent's multicluster manager engages the hub.
const HubClusterName = "hub"

// Member-side permissions: the agent's Secrets and leader election in its own namespace;
// events (recorded through events.k8s.io by the controllers, through the core API by
// leader election, and Warning events read for eventrelay); and the cluster ID, the UID of
// kube-system.
// +kubebuilder:rbac:groups="",namespace=muster-agent,resources=secrets,verbs=get;create;update;patch;delete
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=muster-agent,resources=leases,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get,resourceNames=kube-system

// Run registers with the hub (waiting for acceptance on first start), then runs the
// agent until ctx ends.
func Run(ctx context.Context, opts *Options) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	executorSA, err := worksync.ParseExecutor(opts.WorkExecutor)
	if err != nil {
		return fmt.Errorf("--work-executor: %w", err)
	}
	memberCfg, err := restConfig(opts.Kubeconfig)
	if err != nil {
		return err
	}
	memberCfg.QPS, memberCfg.Burst = opts.KubeAPIQPS, opts.KubeAPIBurst
	member, err := kubernetes.NewForConfig(memberCfg)
	if err != nil {
		return err
	}
	reg := &registration.Registrar{
		Store:        &registration.Store{Client: member, Namespace: opts.Namespace},
		Member:       member,
		CertLifetime: opts.CertLifetime,
		Now:          time.Now,
	}
	creds, err := reg.EnsureCredentials(ctx)
	if err != nil {
		return fmt.Errorf("registering with the hub: %w", err)
	}
	cert, err := creds.Certificate()
	if err != nil {
		return fmt.Errorf("stored hub certificate: %w", err)
	}
	holder := registration.NewCertHolder(cert)
	hubCfg, err := registration.HubConfig(creds.HubURL, creds.CA, holder)
	if err != nil {
		return err
	}
	hubCfg.QPS, hubCfg.Burst = opts.KubeAPIQPS, opts.KubeAPIBurst
	mgr, hub, hubClient, err := newManager(memberCfg, hubCfg, creds.ClusterName, opts)
	if err != nil {
		return err
	}
	hubset, err := kubernetes.NewForConfig(hubCfg)
	if err != nil {
		return err
	}
	renewer := &heartbeat.Renewer{Hub: hubset, Cluster: creds.ClusterName, Holder: holderIdentity(), Interval: opts.HeartbeatInterval,
		Checkpoint: &heartbeat.Checkpoint{Member: member, Namespace: opts.Namespace}}
	if err := keepIdentity(mgr.GetLocalManager(), reg, holder, creds, hubset, hubCfg, renewer); err != nil {
		return err
	}
	executor, err := worksync.NewExecutor(memberCfg, executorSA)
	if err != nil {
		return err
	}
	if err := setupControllers(mgr, hub, hubClient, member, executor, renewer, creds.ClusterName, opts); err != nil {
		return err
	}
	ctrl.Log.Info("agent registered", "cluster", creds.ClusterName, "hub", creds.HubURL, "certificateNotAfter", cert.Leaf.NotAfter)
	return mgr.Start(ctx)
}

// keepIdentity adds what keeps the agent a member in good standing: the certificate
// rotator, the heartbeat Lease renewer, the certificate expiry metric, and the rejoiner
// that restarts the agent to join again when it was denied and a new join line installed.
func keepIdentity(local manager.Manager, reg *registration.Registrar, holder *registration.CertHolder, creds *registration.Credentials, hubset kubernetes.Interface, hubCfg *rest.Config, renewer *heartbeat.Renewer) error {
	hubReader, err := client.New(hubCfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	expiry := agentmetrics.CertificateExpiry(creds.ClusterName, func() time.Time { return holder.Current().Leaf.NotAfter }, time.Now)
	if err := metrics.Registry.Register(expiry); err != nil {
		return fmt.Errorf("registering the certificate expiry metric: %w", err)
	}
	agentmetrics.ForCluster(creds.ClusterName)
	for _, r := range []manager.Runnable{
		&registration.Rotator{Registrar: reg, Holder: holder, Hub: hubset, Credentials: creds},
		renewer,
		&registration.Rejoiner{Store: reg.Store, Hub: hubReader, Cluster: creds.ClusterName, Interval: registration.RejoinPoll},
	} {
		if err := local.Add(r); err != nil {
			return err
		}
	}
	return nil
}

// setupControllers registers the agent's controllers: the Work syncer across hub and
// member, and the member-side Job, BroadcastJob, event relay and inventory controllers.
// The Job controller fences shards by the renewer's silence.
func setupControllers(mgr mcmanager.Manager, hub cluster.Cluster, hubClient client.Client, member kubernetes.Interface, executor cluster.Cluster, renewer *heartbeat.Renewer, clusterName string, opts *Options) error {
	for _, c := range []struct {
		name  string
		setup func(mcmanager.Manager) error
	}{
		{"work-sync", (&worksync.Reconciler{Manager: mgr, HubCluster: HubClusterName, Cluster: clusterName, Workers: opts.WorkWorkers, Executor: executor}).SetupWithManager},
		{"broadcastjob", (&broadcastjob.Reconciler{Manager: mgr, Clock: clock.RealClock{}, Workers: opts.JobWorkers, Binding: opts.BroadcastJobBinding,
			BatchPeriod: opts.BroadcastJobBatchPeriod, BatchQuiet: opts.BroadcastJobBatchQuiet}).SetupWithManager},
		{"job", (&job.Reconciler{Manager: mgr, Clock: clock.RealClock{}, Workers: opts.JobWorkers, BatchPeriod: opts.JobBatchPeriod, BatchQuiet: opts.JobBatchQuiet,
			HubSilence: renewer.Silence}).SetupWithManager},
	} {
		if err := c.setup(mgr); err != nil {
			return fmt.Errorf("setting up %s: %w", c.name, err)
		}
	}
	local := mgr.GetLocalManager()
	for _, c := range []struct {
		name  string
		setup func(manager.Manager) error
	}{
		{"event-relay", (&eventrelay.Reconciler{
			Member: local.GetClient(), Hub: hub.GetClient(), Recorder: hub.GetEventRecorder("muster-agent"), Cluster: clusterName,
		}).SetupWithManager},
		{"node-inventory", (&inventory.Reporter{
			Member: local.GetClient(), Discovery: member.Discovery(), Hub: hubClient, Cluster: clusterName,
		}).SetupWithManager},
	} {
		if err := c.setup(local); err != nil {
			return fmt.Errorf("setting up %s: %w", c.name, err)
		}
	}
	return nil
}

// newManager builds the agent's manager (see Setup) with the hub, restricted to the
// cluster's own namespace, engaged as HubClusterName. It also returns the hub cluster and
// an uncached hub client for the few cluster-scoped hub objects the agent may touch (its
// own MemberCluster), which it may not list or watch.
func newManager(memberCfg, hubCfg *rest.Config, clusterName string, opts *Options) (mcmanager.Manager, cluster.Cluster, client.Client, error) {
	hubCluster, err := HubCluster(hubCfg, clusterName)
	if err != nil {
		return nil, nil, nil, err
	}
	mgr, err := Setup(memberCfg, hubCluster, manager.Options{
		Metrics:                       metricsserver.Options{BindAddress: opts.MetricsAddr},
		HealthProbeBindAddress:        opts.ProbeAddr,
		PprofBindAddress:              opts.ProfilerAddr,
		LeaderElection:                opts.LeaderElect,
		LeaderElectionID:              "muster-agent",
		LeaderElectionNamespace:       opts.Namespace,
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	hubClient, err := client.New(hubCfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, nil, nil, err
	}
	return mgr, hubCluster, hubClient, nil
}

func holderIdentity() string {
	if name, err := os.Hostname(); err == nil {
		return name
	}
	return "muster-agent"
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		return ctrl.GetConfig()
	}
	return clientcmd.BuildConfigFromFlags("", kubeconfig)
}
