package metrics

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// WebhookCertificate is muster_webhook_certificate_expiry_seconds: the seconds until the
// serving certificate this replica serves expires, read at scrape time. The webhook's
// certificate sync tells it each certificate it starts serving.
type WebhookCertificate struct {
	notAfter atomic.Int64 // Unix seconds
}

// RegisterWebhookCertificate registers the gauge, serving certPEM. A gauge registered
// before (an earlier hub in the same process, as in tests) is replaced.
func RegisterWebhookCertificate(certPEM []byte, now func() time.Time) (*WebhookCertificate, error) {
	w := &WebhookCertificate{}
	if err := w.Serve(certPEM); err != nil {
		return nil, err
	}
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "muster_webhook_certificate_expiry_seconds",
		Help: "Seconds until the serving certificate of the hub's admission webhook expires (negative once expired).",
	}, func() float64 { return time.Unix(w.notAfter.Load(), 0).Sub(now()).Seconds() })
	metrics.Registry.Unregister(g)
	return w, metrics.Registry.Register(g)
}

// Serve records certPEM as the certificate served from now on.
func (w *WebhookCertificate) Serve(certPEM []byte) error {
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return fmt.Errorf("reading the webhook's serving certificate: %w", err)
	}
	w.notAfter.Store(certs[0].NotAfter.Unix())
	return nil
}
