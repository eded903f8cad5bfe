package agent

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/musterhq/muster/agent/broadcastjob"
	"github.com/musterhq/muster/agent/worksync"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Options configure the agent. Each field's default is set by NewOptions.
type Options struct {
	// Kubeconfig of the member cluster; empty means in-cluster configuration.
	Kubeconfig string
	// Namespace in the member holding the bootstrap and credential Secrets and the
	// leader-election Lease (default muster-agent).
	Namespace string
	// MetricsAddr serves Prometheus metrics (default ":8080"; "0" disables).
	MetricsAddr string
	// ProbeAddr serves /healthz and /readyz (default ":8081"; "0" disables).
	ProbeAddr string
	// ProfilerAddr serves Go's pprof handlers (default "0": off). Profiles expose the
	// process's internals, so it is off unless someone is measuring.
	ProfilerAddr string
	// LeaderElect makes agent replicas elect one active agent (default true).
	LeaderElect bool
	// HeartbeatInterval is how often the hub lease is renewed (default 10s).
	HeartbeatInterval time.Duration
	// CertLifetime is the client certificate lifetime requested from the hub (default
	// 24h; at least 10m, the API's minimum; the hub's signer may issue shorter ones).
	CertLifetime time.Duration
	// KubeAPIQPS and KubeAPIBurst limit requests to the member and to the hub (default 200
	// and 400): applying hundreds of Works at client-go's defaults would take seconds.
	KubeAPIQPS   float32
	KubeAPIBurst int
	// WorkWorkers is how many Works are synced concurrently (default 8).
	WorkWorkers int
	// WorkExecutor is the ServiceAccount, as NAMESPACE/NAME, that the agent impersonates to
	// apply Works (default muster-agent/muster-work-executor, which `musterctl join`
	// installs): the member's RBAC for it decides what Works may do there.
	WorkExecutor string
	// JobWorkers is how many Jobs, and how many BroadcastJobs, are reconciled
	// concurrently (default 4 each).
	JobWorkers int
	// BroadcastJobBinding is how BroadcastJob pods are put on their nodes (default auto:
	// by spec.nodeName when the template asks nothing of the scheduler that the agent's
	// node check does not cover; scheduler: always through the scheduler).
	BroadcastJobBinding broadcastjob.Binding
	// JobBatchPeriod bounds how long a change of a Job's pods waits for the round that
	// handles it (default 1s, the built-in controller's fixed wait); JobBatchQuiet is the
	// pause in a Job's changes after which they are handled sooner (default 100ms; 0 waits
	// JobBatchPeriod, as upstream).
	JobBatchPeriod time.Duration
	JobBatchQuiet  time.Duration
	// BroadcastJobBatchPeriod and BroadcastJobBatchQuiet are the same for the changes of a
	// BroadcastJob's pods (default 200ms and 0: every change waits the period after the
	// first of its batch).
	BroadcastJobBatchPeriod time.Duration
	BroadcastJobBatchQuiet  time.Duration
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		Namespace:           musterv1.AgentNamespace,
		MetricsAddr:         ":8080",
		ProbeAddr:           ":8081",
		ProfilerAddr:        "0",
		LeaderElect:         true,
		HeartbeatInterval:   10 * time.Second,
		CertLifetime:        24 * time.Hour,
		KubeAPIQPS:          200,
		KubeAPIBurst:        400,
		WorkWorkers:         8,
		WorkExecutor:        worksync.DefaultExecutor.String(),
		JobWorkers:          4,
		BroadcastJobBinding: broadcastjob.BindingAuto,
		JobBatchPeriod:      time.Second,
		JobBatchQuiet:       100 * time.Millisecond,

		BroadcastJobBatchPeriod: broadcastjob.DefaultBatchPeriod,
	}
}

// AddFlags binds the options to command-line flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig of the member cluster; empty for in-cluster configuration")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "member namespace of the agent's Secrets and leader election")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, "address of the Prometheus metrics endpoint; 0 disables it")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", o.ProbeAddr, "address of the health and readiness probes; 0 disables them")
	fs.StringVar(&o.ProfilerAddr, "profiler-bind-address", o.ProfilerAddr, "address of the pprof endpoint, e.g. localhost:6060; 0 disables it")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "elect one active agent among replicas")
	fs.DurationVar(&o.HeartbeatInterval, "heartbeat-interval", o.HeartbeatInterval, "how often the agent renews its hub lease")
	fs.DurationVar(&o.CertLifetime, "cert-lifetime", o.CertLifetime, "client certificate lifetime to request from the hub (at least 10m)")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "queries per second to the member and to the hub")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "burst of requests to the member and to the hub")
	fs.IntVar(&o.WorkWorkers, "work-workers", o.WorkWorkers, "how many Works are synced concurrently")
	fs.StringVar(&o.WorkExecutor, "work-executor", o.WorkExecutor, "NAMESPACE/NAME of the ServiceAccount the agent impersonates to apply Works; the agent needs the impersonate verb on it")
	fs.Var(&o.BroadcastJobBinding, "broadcastjob-binding", "how BroadcastJob pods are put on their nodes: auto (by spec.nodeName when the template needs nothing else from the scheduler: no resource requests, host ports, claimed volumes, inter-pod affinity or spread) or scheduler")
	fs.IntVar(&o.JobWorkers, "job-workers", o.JobWorkers, "how many Jobs, and how many BroadcastJobs, are reconciled concurrently")
	fs.DurationVar(&o.JobBatchPeriod, "job-batch-period", o.JobBatchPeriod, "longest wait of a change of a Job's pods for the round that handles it")
	fs.DurationVar(&o.JobBatchQuiet, "job-batch-quiet", o.JobBatchQuiet, "pause in a Job's changes after which they are handled without waiting out the batch period; 0 always waits it")
	fs.DurationVar(&o.BroadcastJobBatchPeriod, "broadcastjob-batch-period", o.BroadcastJobBatchPeriod, "longest wait of a change of a BroadcastJob's pods for the round that handles it")
	fs.DurationVar(&o.BroadcastJobBatchQuiet, "broadcastjob-batch-quiet", o.BroadcastJobBatchQuiet, "pause in a BroadcastJob's pod changes after which they are handled without waiting out the batch period; 0 always waits it")
}

// minCertLifetime is the shortest certificate a CertificateSigningRequest may ask for
// (the API server refuses a shorter spec.expirationSeconds).
const minCertLifetime = 10 * time.Minute

// Validate reports the flags the agent cannot run with, before it reads any Secret or
// sends a request: a certificate lifetime the hub's API server would refuse only once the
// agent registers, and a heartbeat interval under a second, which renews the hub lease in
// a busy loop and records a lease duration of 0 seconds.
func (o *Options) Validate() error {
	var errs []error
	if _, err := worksync.ParseExecutor(o.WorkExecutor); err != nil {
		errs = append(errs, fmt.Errorf("--work-executor: %w", err))
	}
	if o.CertLifetime < minCertLifetime {
		errs = append(errs, fmt.Errorf("--cert-lifetime %s: must be at least %s", o.CertLifetime, minCertLifetime))
	}
	if o.HeartbeatInterval < time.Second {
		errs = append(errs, fmt.Errorf("--heartbeat-interval %s: must be at least 1s", o.HeartbeatInterval))
	}
	return errors.Join(errs...)
}
