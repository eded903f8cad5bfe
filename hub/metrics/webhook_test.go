package metrics_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/musterhq/muster/hub/metrics"
	"github.com/musterhq/muster/internal/testing/envtest"
)

func TestWebhookCertificateExpiryCountsDownToTheServedCertificate(t *testing.T) {
	notAfter := time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)
	now := notAfter.Add(-72 * time.Hour)
	served, err := metrics.RegisterWebhookCertificate(certificate(t, notAfter), func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	if got := envtest.Metric(t, "muster_webhook_certificate_expiry_seconds", nil); got != 72*3600 {
		t.Errorf("expiry %v s three days before NotAfter, want %v", got, 72*3600)
	}
	now = now.Add(73 * time.Hour)
	if got := envtest.Metric(t, "muster_webhook_certificate_expiry_seconds", nil); got != -3600 {
		t.Errorf("expiry %v s an hour after NotAfter, want -3600 (read at scrape time)", got)
	}
	// A renewed certificate, once served, is the one counted down to.
	if err := served.Serve(certificate(t, notAfter.Add(365*24*time.Hour))); err != nil {
		t.Fatal(err)
	}
	if got, want := envtest.Metric(t, "muster_webhook_certificate_expiry_seconds", nil), float64(365*24*3600-3600); got != want {
		t.Errorf("expiry %v s after a renewal, want %v", got, want)
	}
	if err := served.Serve([]byte("not a certificate")); err == nil {
		t.Error("a Secret without a certificate was served")
	}
	if _, err := metrics.RegisterWebhookCertificate([]byte("not a certificate"), time.Now); err == nil {
		t.Error("a Secret without a certificate registered an expiry")
	}
}

// certificate is a PEM certificate valid until notAfter.
func certificate(t *testing.T, notAfter time.Time) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: notAfter.Add(-time.Hour), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
