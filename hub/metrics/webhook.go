package metrics

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// RegisterWebhookCertificate registers muster_webhook_certificate_expiry_seconds: the
// seconds until the webhook serving certificate certPEM (the one this replica serves)
// expires, read at scrape time. A gauge registered before (an earlier hub in the same
// process, as in tests) is replaced.
func RegisterWebhookCertificate(certPEM []byte, now func() time.Time) error {
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return fmt.Errorf("reading the webhook's serving certificate: %w", err)
	}
	notAfter := certs[0].NotAfter
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "muster_webhook_certificate_expiry_seconds",
		Help: "Seconds until the serving certificate of the hub's admission webhook expires (negative once expired).",
	}, func() float64 { return notAfter.Sub(now()).Seconds() })
	metrics.Registry.Unregister(g)
	return metrics.Registry.Register(g)
}
