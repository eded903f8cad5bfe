package webhook_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"

	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/webhook"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// hubNamespace is where the hub keeps its certificate and dry-runs templates, as in a
// real hub.
const hubNamespace = "muster-system"

// env is a real kube-apiserver that calls the hub's webhook as it does for a hub running
// as a process: at https://localhost:<port>, with the certificate the hub made itself.
var env *envtest.Environment

// certificates rotates the webhook's serving certificate every few seconds, so that the
// whole suite runs across renewals; certificateValidity is each one's lifetime.
var certificates *rotator.CertRotator

const certificateValidity = 24 * time.Second

// webhookPort is where the hub serves the webhook; standbyPort where a replica that never
// leads serves it too.
var webhookPort, standbyPort int

// auditLog is where the API server writes the audit events of muster.dev objects.
var auditLog string

// reservedByFlag is a namespace the hub reserves as --reserved-namespaces would.
const reservedByFlag = "platform"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "muster-webhook-audit-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	auditLog = filepath.Join(dir, "audit.log")
	code := envtest.MainWith(m, &env, startHub, envtest.WithAuditLog(auditLog))
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// startHub serves and registers the webhook the way hub.Run does, and waits until the API
// server sends it requests.
func startHub(ctx context.Context, env *envtest.Environment) error {
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hubNamespace}}); err != nil {
		return err
	}
	// The hub's ClusterRole, which an installation makes: the webhook configurations
	// name it their owner.
	if err := env.Client.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: webhook.OwnerClusterRole}}); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	webhookPort = port
	certDir, err := os.MkdirTemp("", "muster-webhook-test-")
	if err != nil {
		return err
	}
	endpoint := webhook.Endpoint{Port: port, URLHost: "localhost", Namespace: hubNamespace}
	certificates = webhook.Certificates(endpoint, certDir, certificateValidity)
	caBundle, err := webhook.PrepareCertificate(ctx, env.Client, certificates)
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:  scheme.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: crwebhook.NewServer(crwebhook.Options{
			Host: "127.0.0.1", Port: port, CertDir: certDir, CertName: webhook.ServingFile, KeyName: webhook.ServingFile,
		}),
	})
	if err != nil {
		return err
	}
	if err := webhook.Register(ctx, mgr, env.Client, endpoint, caBundle, webhook.Tenancy{ReservedNamespaces: []string{reservedByFlag}}, webhook.Defaults{UnreachableTolerationSeconds: defaultTolerationSeconds}, webhook.Limits{MaxNodesPerMember: maxNodesPerMember}); err != nil {
		return err
	}
	if err := webhook.Rotate(mgr, certificates, func([]byte) error { return nil }); err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			ctrl.Log.Error(err, "test manager stopped")
		}
	}()
	if err := startStandby(ctx, env); err != nil {
		return err
	}
	// The API server loads the configuration asynchronously: wait until a bad FleetJob is
	// refused by the webhook.
	probe := fleetJob("probe", "default", func(fj *fleetJobT) { fj.Spec.Template.Spec.Parallelism = ptrTo[int32](-1) })
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		return err != nil, nil
	})
}

// startStandby starts a second hub replica that never leads (another holds its leader
// Lease), serving the webhook on standbyPort as a standby does: it renews nothing and
// must serve each certificate the leader renews.
func startStandby(ctx context.Context, env *envtest.Environment) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	standbyPort = port
	certDir, err := os.MkdirTemp("", "muster-webhook-standby-")
	if err != nil {
		return err
	}
	const leaseName = "muster-hub-standby-test"
	now := metav1.NewMicroTime(time.Now())
	if err := env.Client.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: hubNamespace, Name: leaseName},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptrTo("the-leader"), LeaseDurationSeconds: ptrTo[int32](3600), AcquireTime: &now, RenewTime: &now,
		},
	}); err != nil {
		return err
	}
	standby := webhook.Certificates(webhook.Endpoint{Port: port, URLHost: "localhost", Namespace: hubNamespace}, certDir, certificateValidity)
	standby.ControllerName = "cert-rotator-standby" // one process, two managers: controller names are process-wide
	if _, err := webhook.PrepareCertificate(ctx, env.Client, standby); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                  scheme.Scheme,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		LeaderElection:          true,
		LeaderElectionID:        leaseName,
		LeaderElectionNamespace: hubNamespace,
		WebhookServer: crwebhook.NewServer(crwebhook.Options{
			Host: "127.0.0.1", Port: port, CertDir: certDir, CertName: webhook.ServingFile, KeyName: webhook.ServingFile,
		}),
	})
	if err != nil {
		return err
	}
	_ = mgr.GetWebhookServer() // serves no path: the test reads only its certificate
	if err := webhook.Rotate(mgr, standby, func([]byte) error { return nil }); err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			ctrl.Log.Error(err, "standby manager stopped")
		}
	}()
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// withoutWebhook runs create while the hub's webhook configuration is away, as for objects
// stored before the webhook existed or while it was not registered, then restores it and
// waits until the API server calls the webhook again.
func withoutWebhook(t *testing.T, create func() error) {
	t.Helper()
	ctx := t.Context()
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: webhook.ConfigurationName}, cfg); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	// The API server drops the configuration from its cache soon after the delete.
	envtest.Eventually(t, "a create without the webhook", func() (bool, string) {
		err := create()
		return err == nil, fmt.Sprintf("create: %v", err)
	})
	restored := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: cfg.Name}, Webhooks: cfg.Webhooks}
	if err := env.Client.Create(ctx, restored); err != nil {
		t.Fatal(err)
	}
	waitForWebhook(t)
}

// waitForWebhook waits until the API server calls the hub's webhook.
func waitForWebhook(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	// Only the webhook refuses two manifests for one object.
	cm := runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"probe","namespace":"default"}}`)}
	probe := &musterv1.Work{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", Namespace: "default"},
		Spec: musterv1.WorkSpec{Manifests: []musterv1.Manifest{{RawExtension: cm}, {RawExtension: cm}}}}
	envtest.Eventually(t, "the webhook back", func() (bool, string) {
		err := env.Client.Create(ctx, probe.DeepCopy())
		return apierrors.IsInvalid(err) && strings.Contains(err.Error(), "spec.manifests[1]"), fmt.Sprintf("create of a Work with two manifests for one object: %v", err)
	})
}

// withHubDown runs fn while the webhook configuration sends requests to a port nothing
// listens on, as when the hub is down, then restores it.
func withHubDown(t *testing.T, fn func()) {
	t.Helper()
	ctx := t.Context()
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: webhook.ConfigurationName}, cfg); err != nil {
		t.Fatal(err)
	}
	working := cfg.DeepCopy()
	for i := range cfg.Webhooks {
		url := *cfg.Webhooks[i].ClientConfig.URL
		host := strings.Split(strings.TrimPrefix(url, "https://"), "/")[0]
		cfg.Webhooks[i].ClientConfig.URL = ptrTo(strings.Replace(url, host, "127.0.0.1:1", 1))
	}
	if err := env.Client.Update(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cur := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: webhook.ConfigurationName}, cur); err != nil {
			t.Fatal(err)
		}
		cur.Webhooks = working.Webhooks
		if err := env.Client.Update(ctx, cur); err != nil {
			t.Fatal(err)
		}
		waitForWebhook(t)
	}()
	// Wait until the API server calls the address that does not answer.
	probe := &musterv1.Work{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", Namespace: "default"}}
	envtest.Eventually(t, "the API server failing to call the webhook", func() (bool, string) {
		err := env.Client.Create(ctx, probe.DeepCopy())
		return err != nil && strings.Contains(err.Error(), "failed calling webhook"), fmt.Sprintf("create: %v", err)
	})
	fn()
}
