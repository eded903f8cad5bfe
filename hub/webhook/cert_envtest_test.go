package webhook_test

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/hub/webhook"
)

// TestServingCertificateIsRenewedWithoutRefusingAWrite: with certificates valid for 24 s,
// a client creating a FleetJob every 200 ms (dry-run: through both webhooks and the
// template's own dry-run) is never refused while the webhook serves three certificates in
// turn, each chaining to the CA bundle the webhook configurations held from the start.
func TestServingCertificateIsRenewedWithoutRefusingAWrite(t *testing.T) {
	ctx := t.Context()
	bundle := caBundles(t)
	served := []*x509.Certificate{servedCertificate(t)}
	deadline := time.Now().Add(3*certificateValidity + 30*time.Second)
	writes := 0
	for len(served) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d certificates served by %s, want a first one and two renewals", len(served), deadline.Format(time.TimeOnly))
		}
		writes++
		if err := env.Client.Create(ctx, fleetJob("renewal", "default", nil), client.DryRunAll); err != nil {
			t.Fatalf("create %d of a valid FleetJob, after %d renewals: %v", writes, len(served)-1, err)
		}
		if crt := servedCertificate(t); !crt.Equal(served[len(served)-1]) {
			served = append(served, crt)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for i, crt := range served {
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(bundle)
		// Each was served while valid: verify it at its last second.
		if _, err := crt.Verify(x509.VerifyOptions{Roots: roots, DNSName: "localhost", CurrentTime: crt.NotAfter.Add(-time.Second)}); err != nil {
			t.Errorf("certificate %d (until %s) does not chain to the configured CA bundle: %v", i, crt.NotAfter.Format(time.TimeOnly), err)
		}
	}
	if after := caBundles(t); !bytes.Equal(after, bundle) {
		t.Error("a renewal changed the webhook configurations' CA bundle: the API server would refuse the replicas still serving the old certificate")
	}
	t.Logf("%d creates, none refused, across %d renewals", writes, len(served)-1)
}

// caBundles returns the CA bundle that every webhook of both configurations holds, and
// fails if they differ or it is not the Secret's CA.
func caBundles(t *testing.T) []byte {
	t.Helper()
	ctx := t.Context()
	var validating admissionregistrationv1.ValidatingWebhookConfiguration
	var mutating admissionregistrationv1.MutatingWebhookConfiguration
	var secret corev1.Secret
	for _, get := range []struct {
		key client.ObjectKey
		obj client.Object
	}{
		{client.ObjectKey{Name: webhook.ConfigurationName}, &validating},
		{client.ObjectKey{Name: webhook.ConfigurationName}, &mutating},
		{client.ObjectKey{Namespace: hubNamespace, Name: webhook.SecretName}, &secret},
	} {
		if err := env.Client.Get(ctx, get.key, get.obj); err != nil {
			t.Fatal(err)
		}
	}
	want := secret.Data["ca.crt"]
	var bundles [][]byte
	for _, w := range validating.Webhooks {
		bundles = append(bundles, w.ClientConfig.CABundle)
	}
	for _, w := range mutating.Webhooks {
		bundles = append(bundles, w.ClientConfig.CABundle)
	}
	for i, b := range bundles {
		if !bytes.Equal(b, want) {
			t.Fatalf("webhook %d's CA bundle (%s) is not the Secret's CA (%s)", i, fingerprint(b), fingerprint(want))
		}
	}
	return want
}

// servedCertificate is the certificate the webhook server presents now.
func servedCertificate(t *testing.T) *x509.Certificate {
	t.Helper()
	conn, err := tls.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(webhookPort)), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the test verifies the chain itself
	if err != nil {
		t.Fatalf("connecting to the webhook: %v", err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}

func fingerprint(b []byte) string { return fmt.Sprintf("%x", sha256.Sum256(b))[:12] }
