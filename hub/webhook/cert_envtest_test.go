package webhook_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/hub/webhook"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// TestServingCertificateIsRenewedWithoutRefusingAWrite: with certificates valid for 24 s,
// a client creating a FleetJob every 200 ms (dry-run: through both webhooks and the
// template's own dry-run) is never refused while the webhook serves three certificates in
// turn, each chaining to the CA bundle the webhook configurations held from the start; a
// standby replica, which renews nothing, serves each renewal too.
func TestServingCertificateIsRenewedWithoutRefusingAWrite(t *testing.T) {
	ctx := t.Context()
	bundle := caBundles(t)
	served := map[string][]*x509.Certificate{}
	observe := func() {
		for replica, port := range map[string]int{"leader": webhookPort, "standby": standbyPort} {
			crt := servedCertificate(t, port)
			if seen := served[replica]; len(seen) == 0 || !crt.Equal(seen[len(seen)-1]) {
				served[replica] = append(seen, crt)
			}
		}
	}
	observe()
	deadline := time.Now().Add(3*certificateValidity + 30*time.Second)
	writes := 0
	for len(served["leader"]) < 3 || len(served["standby"]) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("by %s the leader served %d certificates and the standby %d, want a first one and two renewals each",
				deadline.Format(time.TimeOnly), len(served["leader"]), len(served["standby"]))
		}
		writes++
		if err := env.Client.Create(ctx, fleetJob("renewal", "default", nil), client.DryRunAll); err != nil {
			t.Fatalf("create %d of a valid FleetJob, after %d renewals: %v", writes, len(served["leader"])-1, err)
		}
		observe()
		time.Sleep(200 * time.Millisecond)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(bundle)
	for replica, certs := range served {
		for i, crt := range certs {
			// Each was served while valid: verify it at its last second.
			if _, err := crt.Verify(x509.VerifyOptions{Roots: roots, DNSName: "localhost", CurrentTime: crt.NotAfter.Add(-time.Second)}); err != nil {
				t.Errorf("the %s's certificate %d (until %s) does not chain to the configured CA bundle: %v", replica, i, crt.NotAfter.Format(time.TimeOnly), err)
			}
		}
	}
	if after := caBundles(t); !bytes.Equal(after, bundle) {
		t.Error("a renewal changed the webhook configurations' CA bundle: the API server would refuse the replicas still serving the old certificate")
	}
	t.Logf("%d creates, none refused, across %d renewals", writes, len(served["leader"])-1)
}

// caBundles returns the CA bundle that every webhook of both configurations holds, and
// fails if they differ or it is not the Secret's CA.
func caBundles(t *testing.T) []byte {
	t.Helper()
	var secret corev1.Secret
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: hubNamespace, Name: webhook.SecretName}, &secret); err != nil {
		t.Fatal(err)
	}
	want := secret.Data["ca.crt"]
	if ok, why := bundlesHold(t.Context(), want); !ok {
		t.Fatal(why)
	}
	return want
}

// bundlesHold says whether every webhook of both configurations holds the CA bundle ca,
// and if not, why.
func bundlesHold(ctx context.Context, ca []byte) (bool, string) {
	var validating admissionregistrationv1.ValidatingWebhookConfiguration
	var mutating admissionregistrationv1.MutatingWebhookConfiguration
	if err := env.Client.Get(ctx, client.ObjectKey{Name: webhook.ConfigurationName}, &validating); err != nil {
		return false, err.Error()
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: webhook.ConfigurationName}, &mutating); err != nil {
		return false, err.Error()
	}
	var bundles [][]byte
	for _, w := range validating.Webhooks {
		bundles = append(bundles, w.ClientConfig.CABundle)
	}
	for _, w := range mutating.Webhooks {
		bundles = append(bundles, w.ClientConfig.CABundle)
	}
	for i, b := range bundles {
		if !bytes.Equal(b, ca) {
			return false, fmt.Sprintf("webhook %d's CA bundle is %s, not the Secret's %s", i, fingerprint(b), fingerprint(ca))
		}
	}
	return true, ""
}

// servedCertificate is the certificate the webhook server on port presents now.
func servedCertificate(t *testing.T, port int) *x509.Certificate {
	t.Helper()
	conn, err := tls.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the test verifies the chain itself
	if err != nil {
		t.Fatalf("connecting to the webhook: %v", err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}

func fingerprint(b []byte) string { return fmt.Sprintf("%x", sha256.Sum256(b))[:12] }

// TestAHubFromBeforeRotationKeepsItsCertificateTrustedThroughTheRollout: a hub before
// rotation stored a self-signed certificate whose CA key it did not keep, so the first new
// replica makes a CA; the bundle it registers still trusts the old certificate, which the
// old replicas serve until the rollout replaces them, as well as the new one.
func TestAHubFromBeforeRotationKeepsItsCertificateTrustedThroughTheRollout(t *testing.T) {
	ctx := t.Context()
	const ns = "muster-from-before-rotation"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	host := webhook.ServiceName + "." + ns + ".svc"
	oldChain, oldKey, err := certutil.GenerateSelfSignedCertKey(host, nil, []string{webhook.ServiceName})
	if err != nil {
		t.Fatal(err)
	}
	old := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: webhook.SecretName},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: oldChain, corev1.TLSPrivateKeyKey: oldKey},
	}
	if err := env.Client.Create(ctx, old); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bundle, err := webhook.PrepareCertificate(ctx, env.Client, webhook.Certificates(webhook.Endpoint{Namespace: ns}, dir, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	served, err := os.ReadFile(filepath.Join(dir, webhook.ServingFile))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(bundle)
	for name, chain := range map[string][]byte{"the old replicas'": oldChain, "the new replicas'": served} {
		certs, err := certutil.ParseCertsPEM(chain)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, DNSName: host}); err != nil {
			t.Errorf("%s certificate is not trusted by the registered bundle: %v", name, err)
		}
	}
}

// TestADeletedCertificateSecretIsMadeAgain: cert-controller renews a Secret but never
// creates one; deleted (the runbook's last resort, or by mistake), the replicas make a new
// CA and certificate, the bundles follow, and creates are admitted again.
func TestADeletedCertificateSecretIsMadeAgain(t *testing.T) {
	ctx := t.Context()
	before := caBundles(t)
	if err := env.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: hubNamespace, Name: webhook.SecretName}}); err != nil {
		t.Fatal(err)
	}
	envtest.Eventually(t, "a new CA, in the Secret and both configurations, admitting creates", func() (bool, string) {
		var secret corev1.Secret
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: hubNamespace, Name: webhook.SecretName}, &secret); err != nil {
			return false, err.Error()
		}
		ca := secret.Data["ca.crt"]
		if bytes.Equal(ca, before) {
			return false, "the old CA"
		}
		// Until both configurations hold the new CA and the webhook serves a certificate
		// it signed, a create may still pass on the old pair, and the next be refused.
		if ok, why := bundlesHold(ctx, ca); !ok {
			return false, why
		}
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(ca)
		if _, err := servedCertificate(t, webhookPort).Verify(x509.VerifyOptions{Roots: roots, DNSName: "localhost"}); err != nil {
			return false, "the webhook serves a certificate of another CA: " + err.Error()
		}
		if err := env.Client.Create(ctx, fleetJob("after-deletion", "default", nil), client.DryRunAll); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	if after := caBundles(t); bytes.Equal(after, before) {
		t.Error("the configurations still hold the deleted Secret's CA")
	}
}
