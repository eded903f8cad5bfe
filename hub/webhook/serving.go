package webhook

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// +kubebuilder:rbac:groups="",resources=secrets,verbs=list;watch,namespace=muster-system
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations;mutatingwebhookconfigurations,verbs=list;watch

// Rotate has the leader renew r's certificate (cert-controller) and every replica serve
// each renewal (serveFromSecret); served is told each certificate the replica serves.
func Rotate(mgr ctrl.Manager, r *rotator.CertRotator, served func(certPEM []byte) error) error {
	if err := rotator.AddRotator(mgr, r); err != nil {
		return fmt.Errorf("adding the webhook certificate's rotation: %w", err)
	}
	return serveFromSecret(mgr, r, served)
}

// serveFromSecret keeps the file the webhook server reads (ServingFile in r.CertDir) equal to the
// serving certificate in r's Secret, on every replica, leader or not: cert-controller
// renews the Secret but expects a kubelet-mounted volume to carry it to the files, and
// the hub also runs as a plain process, and a mounted Secret reaches the pod only after
// the kubelet's sync period. served is told each certificate the replica now serves.
//
// It watches that one Secret with a cache of its own: the manager's cache would watch
// every Secret of the hub cluster.
func serveFromSecret(mgr ctrl.Manager, r *rotator.CertRotator, served func(certPEM []byte) error) error {
	secrets, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme:            mgr.GetScheme(),
		Mapper:            mgr.GetRESTMapper(),
		DefaultNamespaces: map[string]cache.Config{r.SecretKey.Namespace: {}},
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Field: fields.OneTermEqualSelector("metadata.name", r.SecretKey.Name)},
		},
	})
	if err != nil {
		return fmt.Errorf("making the webhook certificate's cache: %w", err)
	}
	informer, err := secrets.GetInformer(context.Background(), &corev1.Secret{})
	if err != nil {
		return fmt.Errorf("watching the webhook's serving certificate: %w", err)
	}
	direct, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return fmt.Errorf("making the webhook certificate's client: %w", err)
	}
	sync := servingSync{rotator: r, served: served, client: direct, log: mgr.GetLogger().WithName("webhook-certificate")}
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    sync.write,
		UpdateFunc: func(_, obj any) { sync.write(obj) },
		DeleteFunc: func(any) { sync.recreate() },
	}); err != nil {
		return fmt.Errorf("watching the webhook's serving certificate: %w", err)
	}
	return mgr.Add(everyReplica{secrets})
}

// everyReplica runs a cache on every replica: the manager starts a cache it is given as a
// plain Runnable on the leader only, which would leave a standby serving the certificate
// it started with until it expired.
type everyReplica struct{ cache.Cache }

func (everyReplica) NeedLeaderElection() bool { return false }

type servingSync struct {
	rotator *rotator.CertRotator
	served  func([]byte) error
	client  client.Client
	log     logr.Logger
}

// recreate makes a new certificate when the Secret is deleted (the runbook's last resort,
// or by mistake): cert-controller renews a Secret but never creates one, and would only
// log errors while the served certificate ran out. Every replica tries; the first create
// wins and the others serve it.
func (s servingSync) recreate() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.log.Info("the webhook certificate's Secret was deleted: making a new CA and certificate", "secret", s.rotator.SecretKey)
	if _, err := PrepareCertificate(ctx, s.client, s.rotator); err != nil {
		s.log.Error(err, "making a new webhook certificate", "secret", s.rotator.SecretKey)
	}
}

// write serves the Secret's certificate when it is one this replica can serve. A
// certificate that is not (a Secret being rewritten by hand, say) is left unserved: the
// old files stay until the rotator writes a good one.
func (s servingSync) write(obj any) {
	secret, ok := obj.(*corev1.Secret)
	if !ok {
		return
	}
	if !servable(s.rotator, secret.Data, time.Now()) {
		s.log.Info("not serving the certificate in the Secret: it is not valid for the webhook's names now", "secret", s.rotator.SecretKey)
		return
	}
	if err := writeServingFile(s.rotator.CertDir, secret.Data); err != nil {
		s.log.Error(err, "serving the renewed certificate", "secret", s.rotator.SecretKey)
		return
	}
	s.log.V(2).Info("serving the certificate in the Secret", "secret", s.rotator.SecretKey, "resourceVersion", secret.ResourceVersion)
	if err := s.served(secret.Data[corev1.TLSCertKey]); err != nil {
		s.log.Error(err, "recording the served certificate's expiry")
	}
}
