package metrics_test

import (
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"

	"github.com/musterhq/muster/hub/metrics"
	"github.com/musterhq/muster/internal/testing/envtest"
)

func TestWebhookCertificateExpiryCountsDownToNotAfter(t *testing.T) {
	crt, _, err := certutil.GenerateSelfSignedCertKey("muster-hub-webhook.muster-system.svc", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	certs, err := certutil.ParseCertsPEM(crt)
	if err != nil {
		t.Fatal(err)
	}
	now := certs[0].NotAfter.Add(-72 * time.Hour)
	if err := metrics.RegisterWebhookCertificate(crt, func() time.Time { return now }); err != nil {
		t.Fatal(err)
	}
	if got := envtest.Metric(t, "muster_webhook_certificate_expiry_seconds", nil); got != 72*3600 {
		t.Errorf("expiry %v s three days before NotAfter, want %v", got, 72*3600)
	}
	now = now.Add(73 * time.Hour)
	if got := envtest.Metric(t, "muster_webhook_certificate_expiry_seconds", nil); got != -3600 {
		t.Errorf("expiry %v s an hour after NotAfter, want -3600 (read at scrape time)", got)
	}
	if err := metrics.RegisterWebhookCertificate([]byte("not a certificate"), time.Now); err == nil {
		t.Error("a Secret without a certificate registered an expiry")
	}
}
