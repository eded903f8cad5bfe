package hub

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/musterhq/muster/api/podsecurity"
	"github.com/musterhq/muster/api/scheme"
	hubmetrics "github.com/musterhq/muster/hub/metrics"
	hubwebhook "github.com/musterhq/muster/hub/webhook"
)

// Leader election and events.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Run starts the hub and blocks until ctx ends.
func Run(ctx context.Context, opts *Options) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	cfg, err := restConfig(opts.Kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = opts.KubeAPIQPS, opts.KubeAPIBurst
	level, err := podsecurity.ParseDefaultLevel(opts.DefaultPodSecurityLevel)
	if err != nil {
		return err
	}
	var endpoint hubwebhook.Endpoint
	var certificates *rotator.CertRotator
	var caBundle, servedCert []byte
	var draining *hubwebhook.DrainingServer
	var direct client.Client
	webhookServer := webhook.NewServer(webhook.Options{Port: opts.WebhookPort})
	if opts.WebhookPort > 0 {
		endpoint = hubwebhook.Endpoint{Port: opts.WebhookPort, URLHost: opts.WebhookHost, Namespace: opts.LeaderElectionNamespace}
		if direct, err = client.New(cfg, client.Options{Scheme: scheme.Scheme}); err != nil {
			return err
		}
		certDir, err := os.MkdirTemp("", "muster-hub-webhook-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(certDir)
		certificates = hubwebhook.Certificates(endpoint, certDir, opts.WebhookCertificateValidity)
		if caBundle, err = hubwebhook.PrepareCertificate(ctx, direct, certificates); err != nil {
			return err
		}
		if servedCert, err = os.ReadFile(filepath.Join(certDir, hubwebhook.ServingFile)); err != nil {
			return err
		}
		webhookServer = webhook.NewServer(webhook.Options{
			Port: opts.WebhookPort, CertDir: certDir, CertName: hubwebhook.ServingFile, KeyName: hubwebhook.ServingFile,
		})
		if opts.WebhookHost == "" {
			// Behind the Service, with other replicas to take its calls: drain when stopping.
			draining = hubwebhook.NewDrainingServer(webhookServer)
			webhookServer = draining
		}
	}
	mgr, err := ctrl.NewManager(cfg, managerOptions(opts, webhookServer))
	if err != nil {
		return fmt.Errorf("creating the hub manager: %w", err)
	}
	if _, err := Setup(ctx, mgr, opts); err != nil {
		return err
	}
	if opts.WebhookPort > 0 {
		if err := hubwebhook.Register(ctx, mgr, direct, endpoint, caBundle, hubwebhook.Tenancy{
			DefaultPodSecurityLevel: level, ReservedNamespaces: opts.ReservedNamespaces,
		}, hubwebhook.Defaults{UnreachableTolerationSeconds: opts.DefaultUnreachableTolerationSeconds}, hubwebhook.Limits{MaxNodesPerMember: opts.MaxNodesPerMember}); err != nil {
			return fmt.Errorf("registering the admission webhook: %w", err)
		}
		if err := rotateCertificates(mgr, certificates, servedCert); err != nil {
			return err
		}
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	ready := healthz.Ping
	if opts.WebhookPort > 0 {
		// A replica takes admission traffic through the Service only once it serves it.
		ready = mgr.GetWebhookServer().StartedChecker()
	}
	if err := mgr.AddReadyzCheck("webhook", ready); err != nil {
		return err
	}
	return mgr.Start(drainFirst(ctx, draining))
}

// webhookDrain is how long a stopping hub behind the Service keeps serving the webhook,
// closing each connection after its next answer, before it stops: the API server sends
// several calls a second at a busy hub, and each call moves its connection to a replica
// that stays. The pod's preStop sleep has by then taken it out of the Service, so no new
// connection arrives.
const webhookDrain = 5 * time.Second

// drainFirst returns the context the manager runs in: with a draining server, it ends
// webhookDrain after ctx, which the server spends draining.
func drainFirst(ctx context.Context, server *hubwebhook.DrainingServer) context.Context {
	if server == nil {
		return ctx
	}
	serve, stop := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		defer stop()
		<-ctx.Done()
		server.Drain()
		ctrl.Log.WithName("webhook").Info("stopping: closing the webhook's connections after their next answer", "for", webhookDrain)
		time.Sleep(webhookDrain)
	}()
	return serve
}

// rotateCertificates has the leader renew the webhook's serving certificate and every
// replica serve the renewed one, and exports the served one's expiry.
func rotateCertificates(mgr ctrl.Manager, certificates *rotator.CertRotator, served []byte) error {
	expiry, err := hubmetrics.RegisterWebhookCertificate(served, time.Now)
	if err != nil {
		return err
	}
	return hubwebhook.Rotate(mgr, certificates, expiry.Serve)
}

// managerOptions are the hub manager's: its webhook server, metrics, probes and leader
// election from opts.
func managerOptions(opts *Options, webhookServer webhook.Server) ctrl.Options {
	return ctrl.Options{
		WebhookServer: webhookServer,
		Scheme:        scheme.Scheme,
		// Nothing reads a cached object's managedFields, so the cache drops them: the
		// hub holds a Work per shard, a thousand for a job over a thousand members.
		Cache:                   cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
		Metrics:                 metricsserver.Options{BindAddress: opts.MetricsAddr},
		HealthProbeBindAddress:  opts.ProbeAddr,
		PprofBindAddress:        opts.PprofAddr,
		LeaderElection:          opts.LeaderElect,
		LeaderElectionID:        "muster-hub",
		LeaderElectionNamespace: opts.LeaderElectionNamespace,
		// A new leader may start at once: the old one's process is gone when it stops.
		LeaderElectionReleaseOnCancel: true,
	}
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		return ctrl.GetConfig()
	}
	return clientcmd.BuildConfigFromFlags("", kubeconfig)
}
