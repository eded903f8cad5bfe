package registration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/musterhq/muster/api/identity"
)

const testNamespace = "muster-agent"

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// certFor is a PEM client certificate for key, valid from notBefore to notAfter.
func certFor(t *testing.T, key *ecdsa.PrivateKey, notBefore, notAfter time.Time) []byte {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: identity.AgentUser("c1")}, NotBefore: notBefore, NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func credentialsFor(t *testing.T, key *ecdsa.PrivateKey, notBefore, notAfter time.Time) *Credentials {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &Credentials{
		HubURL: "https://hub.example", CA: []byte("ca"), ClusterName: "c1", IssuedAt: notBefore,
		CertPEM: certFor(t, key, notBefore, notAfter), KeyPEM: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}),
	}
}

// csrFor is c1's certificate request for key.
func csrFor(t *testing.T, name string, key *ecdsa.PrivateKey) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: identity.AgentUser("c1")}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       certificatesv1.CertificateSigningRequestSpec{Request: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})},
	}
}

// An agent restarted when its certificate is due for renewal, but still valid, keeps using
// it (the rotator renews it at once). Its bootstrap Secret was deleted after the join, so
// falling back to a new join, as it did, left it with no identity at all.
func TestRestartWithACertificateDueForRenewalKeepsTheIdentity(t *testing.T) {
	now := time.Now()
	stored := credentialsFor(t, newKey(t), now.Add(-50*time.Second), now.Add(10*time.Second))
	s := &Store{Client: fake.NewClientset(), Namespace: testNamespace}
	if err := s.WriteCredentials(t.Context(), stored); err != nil {
		t.Fatal(err)
	}
	r := &Registrar{Store: s, Now: time.Now}
	got, err := r.EnsureCredentials(t.Context())
	if err != nil {
		t.Fatalf("EnsureCredentials() with a valid stored certificate: %v", err)
	}
	if string(got.CertPEM) != string(stored.CertPEM) {
		t.Error("EnsureCredentials() returned another certificate than the stored one")
	}
}

// An expired certificate and no bootstrap Secret: the agent says how to recover.
func TestRestartWithAnExpiredCertificateNeedsARejoin(t *testing.T) {
	now := time.Now()
	s := &Store{Client: fake.NewClientset(), Namespace: testNamespace}
	if err := s.WriteCredentials(t.Context(), credentialsFor(t, newKey(t), now.Add(-2*time.Minute), now.Add(-time.Minute))); err != nil {
		t.Fatal(err)
	}
	_, err := (&Registrar{Store: s, Now: time.Now}).EnsureCredentials(t.Context())
	if err == nil {
		t.Fatal("EnsureCredentials() with an expired certificate and no bootstrap Secret succeeded")
	}
}

// A retried or resumed request waits for the request already made, which the hub may have
// approved and bound the cluster to, instead of asking again with a new key.
func TestRequestWaitsForThePendingRequest(t *testing.T) {
	key := newKey(t)
	issued := csrFor(t, "muster-c1-pending", key)
	issued.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{identity.ApprovalCondition("Test", "approved")}
	issued.Status.Certificate = certFor(t, key, time.Now(), time.Now().Add(time.Hour))
	hub := fake.NewClientset(issued)
	s := &Store{Client: fake.NewClientset(), Namespace: testNamespace}
	if err := s.WritePending(t.Context(), &Pending{Key: key, Request: issued.Name, Join: true}); err != nil {
		t.Fatal(err)
	}
	r := &Registrar{Store: s, Now: time.Now}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	creds, err := r.requestCertificate(ctx, hub, "https://hub.example", []byte("ca"), "c1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := creds.Certificate(); err != nil {
		t.Errorf("the credentials do not pair the pending key with its certificate: %v", err)
	}
	csrs, err := hub.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(csrs.Items) != 1 {
		t.Errorf("%d certificate requests, want only the pending one", len(csrs.Items))
	}
}

// A join waiting for acceptance keeps its key across restarts, so the hub sees one key per
// join; the bootstrap Secret goes once the agent holds a certificate.
func TestPendingKeySurvivesRestartsAndBootstrapSecretIsDeleted(t *testing.T) {
	cs := fake.NewClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: BootstrapSecret}})
	s := &Store{Client: cs, Namespace: testNamespace}
	key := newKey(t)
	if err := s.WritePending(t.Context(), &Pending{Key: key, Request: "r1", Join: true}); err != nil {
		t.Fatal(err)
	}
	again, err := (&Store{Client: cs, Namespace: testNamespace}).ReadPending(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if again == nil || !key.Equal(again.Key) || again.Request != "r1" || !again.Join {
		t.Errorf("ReadPending() = %+v, want the stored key and join request r1", again)
	}
	for range 2 { // idempotent
		if err := s.DeleteBootstrap(t.Context(), &Bootstrap{}); err != nil {
			t.Fatal(err)
		}
		if err := s.DeletePending(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.CoreV1().Secrets(testNamespace).Get(t.Context(), BootstrapSecret, metav1.GetOptions{}); err == nil {
		t.Error("the bootstrap Secret is still there")
	}
	if p, err := s.ReadPending(t.Context()); err != nil || p != nil {
		t.Errorf("ReadPending() after DeletePending = %+v, %v; want nothing", p, err)
	}
}

// A join made after the agent lost its access does not wait for the rotation it left
// pending (that renews the revoked join): it asks anew, for the bound key and a new join.
func TestJoinAbandonsAPendingRotation(t *testing.T) {
	bound, rotated := newKey(t), newKey(t)
	hub := fake.NewClientset()
	s := &Store{Client: fake.NewClientset(), Namespace: testNamespace}
	if err := s.WritePending(t.Context(), &Pending{Key: rotated, Request: "muster-c1-rotation"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	r := &Registrar{Store: s, Now: time.Now, CertLifetime: time.Hour}
	if _, err := r.requestCertificate(ctx, hub, "https://hub.example", []byte("ca"), "c1", nil, bound); err == nil {
		t.Fatal("requestCertificate() got a certificate nobody issued")
	}
	csrs, err := hub.CertificatesV1().CertificateSigningRequests().List(t.Context(), metav1.ListOptions{})
	if err != nil || len(csrs.Items) != 1 {
		t.Fatalf("certificate requests = %d (%v), want the one new join", len(csrs.Items), err)
	}
	block, _ := pem.Decode(csrs.Items[0].Spec.Request)
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	spki, _ := x509.MarshalPKIXPublicKey(&bound.PublicKey)
	if got := identity.KeyFingerprint(req.RawSubjectPublicKeyInfo); got != identity.KeyFingerprint(spki) {
		t.Errorf("the join asks for key %s, want the bound key", got)
	}
	if _, ok := identity.JoinIDOf("c1", req.Subject.Organization); !ok || len(req.Subject.Organization) != 3 {
		t.Errorf("the join's organizations %v name no single join", req.Subject.Organization)
	}
	if exp := csrs.Items[0].Spec.ExpirationSeconds; exp == nil || *exp != 3600 {
		t.Errorf("the join asks for expirationSeconds %v, want the agent's 3600", exp)
	}
	if p, err := s.ReadPending(t.Context()); err != nil || p == nil || !p.Join || !p.Key.Equal(bound) {
		t.Errorf("pending request = %+v (%v), want the join for the bound key", p, err)
	}
}
