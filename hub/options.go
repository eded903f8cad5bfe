package hub

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/musterhq/muster/api/identity"
	"github.com/musterhq/muster/api/podsecurity"
	"github.com/musterhq/muster/api/workloadspread"
	"github.com/musterhq/muster/hub/internal/failover"
	hubwebhook "github.com/musterhq/muster/hub/webhook"
	"github.com/musterhq/muster/placement/clusters"
)

// Options configure the hub. Each field's default is set by NewOptions.
type Options struct {
	// Kubeconfig of the hub cluster; empty means in-cluster configuration.
	Kubeconfig string
	// MetricsAddr serves Prometheus metrics (default ":8080"; "0" disables).
	MetricsAddr string
	// ProbeAddr serves /healthz and /readyz (default ":8081"; "0" disables).
	ProbeAddr string
	// PprofAddr serves Go's profiles (net/http/pprof) for a profile of a live hub;
	// empty, the default, serves none.
	PprofAddr string
	// LeaderElect makes replicas elect one active hub (default true).
	LeaderElect bool
	// LeaderElectionNamespace holds the leader Lease (default muster-system).
	LeaderElectionNamespace string
	// ClusterGracePeriod is how long an agent's lease may go unrenewed before its cluster
	// is unreachable (default 40s).
	ClusterGracePeriod time.Duration
	// DefaultUnreachableTolerationSeconds is how long a new FleetJob tolerates
	// muster.dev/unreachable:NoExecute when it says nothing of it (default 300, as
	// kube-apiserver's --default-unreachable-toleration-seconds for pods): how long its work
	// stays on an unreachable cluster before it moves.
	DefaultUnreachableTolerationSeconds int64
	// FencingMargin is how much sooner than the hub would move it the agent stops fenced
	// work (a Job template with podReplacementPolicy: Failed), so that its pods are gone
	// before their replacements start elsewhere (default 60s; see clusters.Fencing).
	FencingMargin time.Duration
	// EvictionRate is how many shards per second the hub evicts at most (default 1).
	EvictionRate float64
	// UnhealthyClusterThreshold is the share of a placement's clusters that may be
	// unreachable at once while work still moves off them (default 0.55); above it the
	// hub takes the outage for its own and moves nothing.
	UnhealthyClusterThreshold float64
	// MaxNodesPerMember is how many nodes of one member the hub keeps (default 5000): an
	// agent may create that many over 500 NodeSlices, and a member reporting more gets
	// InventoryComplete=False.
	MaxNodesPerMember int
	// AutoAcceptClusters accepts every cluster that registers (default false).
	AutoAcceptClusters bool
	// MaxAgentCertificateLifetime is the longest agent certificate the hub approves
	// (default 24h); requests for longer ones, or for none, are denied.
	MaxAgentCertificateLifetime time.Duration
	// WebhookPort serves the validating admission webhook (default 9443; 0 disables it).
	WebhookPort int
	// WebhookHost, when set, is the address the API server calls the webhook at
	// (https://host:port), for a hub running as a process; empty means in-cluster, through
	// the muster-hub-webhook Service.
	WebhookHost string
	// WebhookCertificateValidity is how long each serving certificate of the webhook is
	// valid (default one year); the leader renews it a quarter of that before it expires.
	WebhookCertificateValidity time.Duration
	// CronJobWorkers is how many FleetCronJobs are reconciled at once (default 50;
	// kube-controller-manager's --concurrent-cron-job-syncs is 5). Every cron on one
	// schedule is due in the same instant and a pass mostly waits for its create: the
	// workers let a slot's creates reach the API server together rather than five at a time.
	CronJobWorkers int
	// FleetJobWorkers and BroadcastJobWorkers are how many FleetJobs and BroadcastJobs
	// are reconciled at once (default 5 each, as kube-controller-manager's
	// --concurrent-job-syncs). A first placement over a large fleet writes a Work per
	// member; with one worker, ten jobs placed together wait for each other's writes.
	FleetJobWorkers, BroadcastJobWorkers int
	// KubeAPIQPS and KubeAPIBurst limit requests to the hub's API server (default 200
	// and 400). Every cron on the same schedule writes in the same second.
	KubeAPIQPS   float32
	KubeAPIBurst int
	// SpreadUnschedulableWindow is how long an Adaptive WorkloadSpread keeps new pods off a
	// subset whose pods could not be scheduled (default 5m, as OpenKruise).
	SpreadUnschedulableWindow time.Duration
	// DefaultPodSecurityLevel is the Pod Security enforce level of a hub namespace whose
	// labels name none (default baseline): a hub namespace reaches many clusters, so it
	// is stricter than a single cluster's default, privileged.
	DefaultPodSecurityLevel string
	// ReservedNamespaces are hub namespaces where Muster objects are refused, besides
	// kube-system, kube-public, kube-node-lease, muster-system, muster-agent and
	// muster-member-* (default none); an entry ending in * is a prefix.
	ReservedNamespaces []string
}

// DefaultMaxNodesPerMember fits a fleet of a thousand members of a thousand nodes five
// times over: ten NodeSlices a member.
const DefaultMaxNodesPerMember = 5000

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		MetricsAddr:                         ":8080",
		ProbeAddr:                           ":8081",
		LeaderElect:                         true,
		LeaderElectionNamespace:             "muster-system",
		ClusterGracePeriod:                  40 * time.Second,
		DefaultUnreachableTolerationSeconds: failover.DefaultUnreachableTolerationSeconds,
		FencingMargin:                       clusters.DefaultFencingMargin,
		EvictionRate:                        failover.DefaultEvictionRate,
		UnhealthyClusterThreshold:           clusters.DefaultDisruptionThreshold,
		WebhookPort:                         9443,
		WebhookCertificateValidity:          hubwebhook.DefaultCertificateValidity,
		CronJobWorkers:                      50,
		FleetJobWorkers:                     5,
		BroadcastJobWorkers:                 5,
		KubeAPIQPS:                          200,
		KubeAPIBurst:                        400,
		SpreadUnschedulableWindow:           workloadspread.DefaultUnschedulableWindow,
		DefaultPodSecurityLevel:             string(podsecurity.DefaultLevel),
		MaxAgentCertificateLifetime:         identity.DefaultMaxCertificateLifetime,
		MaxNodesPerMember:                   DefaultMaxNodesPerMember,
	}
}

// AddFlags binds the options to command-line flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig of the hub cluster; empty for in-cluster configuration")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, "address of the Prometheus metrics endpoint; 0 disables it")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", o.ProbeAddr, "address of the health and readiness probes; 0 disables them")
	fs.StringVar(&o.PprofAddr, "pprof-bind-address", o.PprofAddr, "address of Go's profiling endpoints (/debug/pprof); empty, the default, serves none")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "elect one active hub among replicas")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "namespace of the leader election Lease")
	fs.DurationVar(&o.ClusterGracePeriod, "cluster-grace-period", o.ClusterGracePeriod, "how long an agent may miss lease renewals before its cluster is unreachable")
	fs.Int64Var(&o.DefaultUnreachableTolerationSeconds, "default-unreachable-toleration-seconds", o.DefaultUnreachableTolerationSeconds,
		"how long a new FleetJob without a toleration of muster.dev/unreachable:NoExecute tolerates it: how long its work stays on an unreachable cluster before it moves")
	fs.DurationVar(&o.FencingMargin, "fencing-margin", o.FencingMargin,
		"how much sooner than the hub would move it an agent cut off from the hub stops work whose Job template has podReplacementPolicy: Failed; it must cover the pods' termination grace period")
	fs.Float64Var(&o.EvictionRate, "eviction-rate", o.EvictionRate, "shards per second the hub evicts at most from clusters with NoExecute taints")
	fs.Float64Var(&o.UnhealthyClusterThreshold, "unhealthy-cluster-threshold", o.UnhealthyClusterThreshold,
		"share (0-1) of the clusters a placement selects that may be unreachable at once while work still moves off them; above it nothing moves")
	fs.IntVar(&o.MaxNodesPerMember, "max-nodes-per-member", o.MaxNodesPerMember,
		"how many nodes of one member the hub keeps; its agent's NodeSlices beyond that many over 500 are refused")
	fs.IntVar(&o.WebhookPort, "webhook-port", o.WebhookPort, "port of the validating admission webhook; 0 disables it")
	fs.StringVar(&o.WebhookHost, "webhook-host", o.WebhookHost,
		"DNS name the API server calls the webhook at, for a hub running outside the cluster (localhost for this machine); empty: the muster-hub-webhook Service")
	fs.DurationVar(&o.WebhookCertificateValidity, "webhook-cert-validity", o.WebhookCertificateValidity,
		"how long each serving certificate of the webhook is valid; the leader renews it when a quarter of that remains")
	fs.IntVar(&o.CronJobWorkers, "concurrent-fleetcronjob-syncs", o.CronJobWorkers, "FleetCronJobs reconciled at once")
	fs.IntVar(&o.FleetJobWorkers, "concurrent-fleetjob-syncs", o.FleetJobWorkers, "FleetJobs reconciled at once")
	fs.IntVar(&o.BroadcastJobWorkers, "concurrent-broadcastjob-syncs", o.BroadcastJobWorkers, "hub BroadcastJobs reconciled at once")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "queries per second to the hub's API server")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "burst of queries to the hub's API server")
	fs.DurationVar(&o.SpreadUnschedulableWindow, "spread-unschedulable-window", o.SpreadUnschedulableWindow,
		"how long an Adaptive WorkloadSpread keeps new pods off a subset whose pods could not be scheduled, before trying it again")
	fs.StringVar(&o.DefaultPodSecurityLevel, "default-pod-security-level", o.DefaultPodSecurityLevel,
		"Pod Security enforce level (privileged, baseline or restricted) of a hub namespace without a pod-security.kubernetes.io/enforce label")
	fs.StringSliceVar(&o.ReservedNamespaces, "reserved-namespaces", o.ReservedNamespaces,
		"hub namespaces where FleetJobs, BroadcastJobs, FleetCronJobs and WorkloadSpreads are refused, besides kube-system, kube-public, kube-node-lease, muster-system, muster-agent and muster-member-*; a trailing * makes a prefix")
	fs.BoolVar(&o.AutoAcceptClusters, "auto-accept-clusters", o.AutoAcceptClusters, "accept every cluster that registers, without musterctl accept")
	fs.DurationVar(&o.MaxAgentCertificateLifetime, "max-agent-certificate-lifetime", o.MaxAgentCertificateLifetime,
		"longest agent client certificate the hub approves; requests for longer ones, or with no expirationSeconds, are denied")
}

// minCertificateLifetime is the shortest certificate a CertificateSigningRequest may ask
// for: a shorter --max-agent-certificate-lifetime would deny every agent's request.
const minCertificateLifetime = 10 * time.Minute

// minWebhookCertificateValidity is the shortest serving certificate the hub makes: a
// renewal is due a quarter of it before expiry, and every replica must have reloaded the
// new one by then (the certificate watcher polls every 10 seconds).
const minWebhookCertificateValidity = time.Minute

// maxWebhookCertificateValidity keeps the renewal lookahead (a quarter of the validity)
// far inside the CA's ten years: past forty, the CA would never look valid ahead and
// cert-controller would make a new one on every check.
const maxWebhookCertificateValidity = 5 * 365 * 24 * time.Hour

// Validate reports the flags the hub cannot run with, before it connects to anything:
// each would otherwise show only later, as every cluster denied or unreachable.
func (o *Options) Validate() error {
	var errs []error
	if _, err := podsecurity.ParseDefaultLevel(o.DefaultPodSecurityLevel); err != nil {
		errs = append(errs, fmt.Errorf("--default-pod-security-level: %w", err))
	}
	if o.MaxAgentCertificateLifetime < minCertificateLifetime {
		errs = append(errs, fmt.Errorf("--max-agent-certificate-lifetime %s: must be at least %s, or every agent's certificate request is denied",
			o.MaxAgentCertificateLifetime, minCertificateLifetime))
	}
	if o.ClusterGracePeriod <= 0 {
		errs = append(errs, fmt.Errorf("--cluster-grace-period %s: must be positive, or every cluster is unreachable", o.ClusterGracePeriod))
	}
	if o.DefaultUnreachableTolerationSeconds < 0 {
		errs = append(errs, fmt.Errorf("--default-unreachable-toleration-seconds %d: must not be negative", o.DefaultUnreachableTolerationSeconds))
	}
	if o.FencingMargin <= 0 {
		errs = append(errs, fmt.Errorf("--fencing-margin %s: must be positive, or a fenced pod may still run when its replacement starts", o.FencingMargin))
	}
	if o.MaxNodesPerMember < 1 {
		errs = append(errs, fmt.Errorf("--max-nodes-per-member %d: must be at least 1, or no member can report a node", o.MaxNodesPerMember))
	}
	if o.EvictionRate <= 0 {
		errs = append(errs, fmt.Errorf("--eviction-rate %v: must be positive, or no work ever moves off a lost cluster", o.EvictionRate))
	}
	if o.UnhealthyClusterThreshold <= 0 || o.UnhealthyClusterThreshold > 1 {
		errs = append(errs, fmt.Errorf("--unhealthy-cluster-threshold %v: must be above 0 and at most 1", o.UnhealthyClusterThreshold))
	}
	for _, w := range []struct {
		flag    string
		workers int
	}{
		{"--concurrent-fleetcronjob-syncs", o.CronJobWorkers}, {"--concurrent-fleetjob-syncs", o.FleetJobWorkers}, {"--concurrent-broadcastjob-syncs", o.BroadcastJobWorkers},
	} {
		if w.workers < 1 {
			errs = append(errs, fmt.Errorf("%s %d: must be at least 1", w.flag, w.workers))
		}
	}
	if o.WebhookPort < 0 || o.WebhookPort > 65535 {
		errs = append(errs, fmt.Errorf("--webhook-port %d: must be 0 (off) or a TCP port", o.WebhookPort))
	}
	if err := (hubwebhook.Endpoint{URLHost: o.WebhookHost}).Validate(); err != nil {
		errs = append(errs, fmt.Errorf("--webhook-host: %w", err))
	}
	if o.WebhookCertificateValidity < minWebhookCertificateValidity {
		errs = append(errs, fmt.Errorf("--webhook-cert-validity %s: must be at least %s, or the replicas could not reload one certificate before the next",
			o.WebhookCertificateValidity, minWebhookCertificateValidity))
	}
	if o.WebhookCertificateValidity > maxWebhookCertificateValidity {
		errs = append(errs, fmt.Errorf("--webhook-cert-validity %s: must be at most %s, well inside the ten years of the CA that signs it",
			o.WebhookCertificateValidity, maxWebhookCertificateValidity))
	}
	return errors.Join(errs...)
}
