package registration_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/agent/registration"
	"github.com/musterhq/muster/api/identity"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/builders"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// signerKey is the key of the test's certificate authority, standing for the hub's
// signer: the agent never authenticates with what it issues here.
var signerKey = builders.NewKey()

// agent is one agent under test: its Secrets in a namespace of their own, the cluster it
// joins as, and its registrar.
type agent struct {
	t       *testing.T
	cluster string
	member  kubernetes.Interface
	reg     *registration.Registrar
}

// newAgent installs a join line for cluster in a fresh namespace, as `musterctl join` does,
// pointing at hubURL.
func newAgent(t *testing.T, cluster, hubURL string) *agent {
	t.Helper()
	member, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t)
	boot := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: registration.BootstrapSecret},
		Data: map[string][]byte{
			registration.KeyHubURL: []byte(hubURL), registration.KeyCA: env.Config.CAData,
			registration.KeyToken: []byte(bootstrapToken), registration.KeyClusterName: []byte(cluster),
		},
	}
	if _, err := member.CoreV1().Secrets(ns).Create(t.Context(), boot, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return &agent{t: t, cluster: cluster, member: member, reg: &registration.Registrar{
		Store: &registration.Store{Client: member, Namespace: ns}, Member: member, CertLifetime: time.Hour, Now: time.Now,
	}}
}

// ensure runs EnsureCredentials in the background, as the agent's start does.
func (a *agent) ensure() <-chan result {
	out := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(a.t.Context(), 30*time.Second)
		defer cancel()
		creds, err := a.reg.EnsureCredentials(ctx)
		out <- result{creds, err}
	}()
	return out
}

type result struct {
	creds *registration.Credentials
	err   error
}

// nextRequest waits for a certificate request of the agent's cluster other than those
// seen, and returns it.
func (a *agent) nextRequest(seen ...string) *certificatesv1.CertificateSigningRequest {
	a.t.Helper()
	var found *certificatesv1.CertificateSigningRequest
	envtest.Eventually(a.t, "a certificate request of "+a.cluster, func() (bool, string) {
		var list certificatesv1.CertificateSigningRequestList
		if err := env.Client.List(a.t.Context(), &list, client.MatchingLabels{musterv1.ClusterNameLabel: a.cluster}); err != nil {
			return false, err.Error()
		}
		for i := range list.Items {
			if !contains(seen, list.Items[i].Name) {
				found = &list.Items[i]
				return true, ""
			}
		}
		return false, "requests seen: " + strings.Join(seen, ",")
	})
	return found
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// decide approves or denies csr on the hub, as the approver does.
func decide(t *testing.T, csr *certificatesv1.CertificateSigningRequest, condition certificatesv1.CertificateSigningRequestCondition) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	csr.Status.Conditions = append(csr.Status.Conditions, condition)
	if _, err := cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(t.Context(), csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// issue approves csr and writes the certificate the signer makes of it: its subject and
// key, for its requested lifetime.
func issue(t *testing.T, csr *certificatesv1.CertificateSigningRequest) {
	t.Helper()
	decide(t, csr, identity.ApprovalCondition("Test", "approved by the test"))
	var cur certificatesv1.CertificateSigningRequest
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(csr), &cur); err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(cur.Spec.Request)
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	cur.Status.Certificate = signed(t, req.Subject, req.PublicKey, now.Add(-time.Second), now.Add(time.Duration(*cur.Spec.ExpirationSeconds)*time.Second))
	if err := env.Client.Status().Update(t.Context(), &cur); err != nil {
		t.Fatal(err)
	}
}

// signed is a PEM client certificate for pub with subject, valid from notBefore to
// notAfter.
func signed(t *testing.T, subject pkix.Name, pub any, notBefore, notAfter time.Time) []byte {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: subject, NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test signer"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, pub, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func keyOf(t *testing.T, csr *certificatesv1.CertificateSigningRequest) string {
	t.Helper()
	key, err := identity.RequestKey(csr)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func secretExists(t *testing.T, a *agent, name string) bool {
	t.Helper()
	_, err := a.member.CoreV1().Secrets(a.reg.Store.Namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

func kubeSystemUID(t *testing.T) string {
	t.Helper()
	var ns corev1.Namespace
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: metav1.NamespaceSystem}, &ns); err != nil {
		t.Fatal(err)
	}
	return string(ns.UID)
}

// TestAJoinRegistersAsksWaitsAndKeepsTheCertificate: a first start registers the
// cluster under its cluster ID, asks for the configured lifetime for an agent identity
// only, waits while nobody has accepted, and once issued keeps the certificate and forgets
// the join line.
func TestAJoinRegistersAsksWaitsAndKeepsTheCertificate(t *testing.T) {
	a := newAgent(t, "join-ok", env.Config.Host)
	done := a.ensure()
	csr := a.nextRequest()

	var mc musterv1.MemberCluster
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: "join-ok"}, &mc); err != nil {
		t.Fatalf("the cluster was not registered: %v", err)
	}
	if got := mc.Annotations[registration.ClusterIDAnnotation]; got != kubeSystemUID(t) {
		t.Errorf("registered cluster ID %q, want kube-system's UID", got)
	}
	if csr.Spec.ExpirationSeconds == nil || *csr.Spec.ExpirationSeconds != 3600 {
		t.Errorf("requested lifetime %v, want the configured hour", csr.Spec.ExpirationSeconds)
	}
	req, err := identity.ParseAgentCSR(csr)
	if err != nil || req.Cluster != "join-ok" {
		t.Fatalf("the request is no agent identity of join-ok: %+v, %v", req, err)
	}
	if csr.Spec.Username != "system:bootstrap:test" {
		t.Errorf("requested as %q, want the bootstrap token's user", csr.Spec.Username)
	}
	if !secretExists(t, a, registration.PendingSecret) {
		t.Error("the request's key is not kept while it waits")
	}
	select {
	case r := <-done:
		t.Fatalf("EnsureCredentials returned before the request was issued: %+v, %v", r.creds, r.err)
	default:
	}

	issue(t, csr)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	cert, err := r.creds.Certificate()
	if err != nil {
		t.Fatalf("the credentials do not pair the key with the issued certificate: %v", err)
	}
	if r.creds.ClusterName != "join-ok" || r.creds.HubURL != env.Config.Host || cert.Leaf.Subject.CommonName != identity.AgentUser("join-ok") {
		t.Errorf("credentials for %s at %s, certificate of %s", r.creds.ClusterName, r.creds.HubURL, cert.Leaf.Subject.CommonName)
	}
	stored, err := a.reg.Store.ReadCredentials(t.Context())
	if err != nil || stored == nil || string(stored.CertPEM) != string(r.creds.CertPEM) {
		t.Errorf("stored credentials %v, %v; want the issued ones", stored, err)
	}
	if secretExists(t, a, registration.BootstrapSecret) || secretExists(t, a, registration.PendingSecret) {
		t.Error("the join line or the pending request outlived the join")
	}
}

// TestADeniedOrVanishedRequestIsAskedAgainWithTheSameKey: a denied request fails the
// start, saying why; the next start asks again for the same key, as it does when its
// request disappears: the hub binds a cluster to a key, and a new one would look like a
// competing join.
func TestADeniedOrVanishedRequestIsAskedAgainWithTheSameKey(t *testing.T) {
	a := newAgent(t, "join-again", env.Config.Host)
	done := a.ensure()
	first := a.nextRequest()
	decide(t, first, identity.DenialCondition("Test", "not yet"))
	r := <-done
	if r.err == nil || !strings.Contains(r.err.Error(), "not yet") {
		t.Fatalf("EnsureCredentials after a denial = %v, want the denial's message", r.err)
	}
	if !secretExists(t, a, registration.BootstrapSecret) || !secretExists(t, a, registration.PendingSecret) {
		t.Fatal("the join line or the request's key was dropped after a denial")
	}

	done = a.ensure()
	second := a.nextRequest(first.Name)
	if keyOf(t, second) != keyOf(t, first) {
		t.Error("the request after a denial asks for another key")
	}
	if err := env.Client.Delete(t.Context(), second); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.err == nil {
		t.Fatal("EnsureCredentials succeeded with its request deleted")
	}
	done = a.ensure()
	third := a.nextRequest(first.Name, second.Name)
	if keyOf(t, third) != keyOf(t, first) {
		t.Error("the request after a vanished one asks for another key")
	}
	issue(t, third)
	if r := <-done; r.err != nil {
		t.Fatal(r.err)
	}
}

// TestAnExpiredAgentRejoinsWithItsBoundKey: an agent whose certificate expired and that
// was given a new join line joins again for the key the hub has bound its cluster to, so
// `musterctl accept` approves it without --rekey.
func TestAnExpiredAgentRejoinsWithItsBoundKey(t *testing.T) {
	a := newAgent(t, "join-expired", env.Config.Host)
	key := builders.NewKey()
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	expired := &registration.Credentials{
		HubURL: env.Config.Host, CA: env.Config.CAData, ClusterName: "join-expired", IssuedAt: time.Now().Add(-2 * time.Hour),
		CertPEM: signed(t, pkix.Name{CommonName: identity.AgentUser("join-expired")}, &key.PublicKey, time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
	if err := a.reg.Store.WriteCredentials(t.Context(), expired); err != nil {
		t.Fatal(err)
	}
	done := a.ensure()
	csr := a.nextRequest()
	if want := identity.KeyFingerprint(builders.SPKI(key)); keyOf(t, csr) != want {
		t.Errorf("the rejoin asks for key %s, want the bound %s", keyOf(t, csr), want)
	}
	issue(t, csr)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if cert, err := r.creds.Certificate(); err != nil || !time.Now().Before(cert.Leaf.NotAfter) {
		t.Errorf("the rejoin's certificate: %v, %v", cert, err)
	}
}

// TestANameTakenByAnotherClusterIsRefused: a join line for a name another cluster (another
// kube-system UID) holds stops the join, asking for another name, and asks for nothing.
func TestANameTakenByAnotherClusterIsRefused(t *testing.T) {
	taken := builders.MakeMemberCluster("join-taken").Obj()
	taken.UID, taken.Annotations = "", map[string]string{registration.ClusterIDAnnotation: "someone-else"}
	if err := env.Client.Create(t.Context(), taken); err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, "join-taken", env.Config.Host)
	r := <-a.ensure()
	if r.err == nil || !strings.Contains(r.err.Error(), "choose another --cluster-name") {
		t.Fatalf("EnsureCredentials = %v, want the name refused", r.err)
	}
	var list certificatesv1.CertificateSigningRequestList
	if err := env.Client.List(t.Context(), &list, client.MatchingLabels{musterv1.ClusterNameLabel: "join-taken"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d certificate requests made for a name that is not ours", len(list.Items))
	}
}

// TestAnUnreachableHubFailsTheJoinAndKeepsTheJoinLine: with the hub unreachable the join
// fails, saying what it tried, and the join line stays for the next start.
func TestAnUnreachableHubFailsTheJoinAndKeepsTheJoinLine(t *testing.T) {
	a := newAgent(t, "join-unreachable", "https://127.0.0.1:1")
	r := <-a.ensure()
	if r.err == nil || !strings.Contains(r.err.Error(), "registering MemberCluster join-unreachable") {
		t.Fatalf("EnsureCredentials = %v, want the registration's failure", r.err)
	}
	if !secretExists(t, a, registration.BootstrapSecret) {
		t.Error("the join line was dropped after a failed join")
	}
}

// TestRotationRenewsForTheSameJoinAndSwapsTheCertificateIn: a certificate due for renewal
// is renewed with a request for a new key in the same join, that shows the hub the
// certificate it renews; once issued, the agent uses and stores the new one.
func TestRotationRenewsForTheSameJoinAndSwapsTheCertificateIn(t *testing.T) {
	a := newAgent(t, "rotate", env.Config.Host)
	const joinID = "00112233445566778899aabbccddeeff"
	key := builders.NewKey()
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	subject := pkix.Name{CommonName: identity.AgentUser("rotate"), Organization: []string{
		identity.MembersGroup, identity.ClusterGroup("rotate"), identity.JoinGroup("rotate", joinID),
	}}
	creds := &registration.Credentials{
		HubURL: env.Config.Host, CA: env.Config.CAData, ClusterName: "rotate", IssuedAt: time.Now().Add(-time.Hour),
		// Issued an hour ago for 65 minutes: due for renewal 52 minutes in.
		CertPEM: signed(t, subject, &key.PublicKey, time.Now().Add(-time.Hour), time.Now().Add(5*time.Minute)), KeyPEM: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
	cert, err := creds.Certificate()
	if err != nil {
		t.Fatal(err)
	}
	hub, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	holder := registration.NewCertHolder(cert)
	rotated := make(chan time.Time, 1)
	rot := &registration.Rotator{Registrar: a.reg, Holder: holder, Hub: hub, Credentials: creds, Rotated: func(at time.Time) { rotated <- at }}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = rot.Start(ctx) }()

	csr := a.nextRequest()
	req, err := identity.ParseAgentCSR(csr)
	if err != nil || req.JoinID != joinID {
		t.Fatalf("the renewal asks for join %q (%v), want the current %s", req.JoinID, err, joinID)
	}
	if req.Key == identity.KeyFingerprint(builders.SPKI(key)) {
		t.Error("the renewal asks for the current key")
	}
	if block, _ := pem.Decode([]byte(csr.Annotations[identity.CurrentCertificateAnnotation])); block == nil || !bytes.Equal(block.Bytes, cert.Leaf.Raw) {
		t.Errorf("the renewal does not show the certificate it renews: %q", csr.Annotations[identity.CurrentCertificateAnnotation])
	}
	issue(t, csr)
	var notAfter time.Time
	select {
	case notAfter = <-rotated:
	case <-time.After(30 * time.Second):
		t.Fatal("no rotation after the renewal was issued")
	}
	if now := holder.Current().Leaf; now.NotAfter != notAfter || now.SerialNumber.Cmp(cert.Leaf.SerialNumber) == 0 {
		t.Errorf("the agent still presents the old certificate (until %s)", now.NotAfter)
	}
	stored, err := a.reg.Store.ReadCredentials(t.Context())
	if err != nil || stored == nil {
		t.Fatalf("stored credentials: %v, %v", stored, err)
	}
	if s, err := stored.Certificate(); err != nil || !s.Leaf.NotAfter.Equal(notAfter) {
		t.Errorf("the stored certificate is not the renewed one: %v", err)
	}
}
