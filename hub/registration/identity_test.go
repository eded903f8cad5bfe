package registration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

type csrOpt func(*x509.CertificateRequest, *certificatesv1.CertificateSigningRequest)

func makeCSR(t *testing.T, cluster string, opts ...csrOpt) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: musterv1.AgentUser(cluster), Organization: []string{musterv1.MembersGroup, musterv1.ClusterGroup(cluster)}}}
	csr := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
		SignerName: certificatesv1.KubeAPIServerClientSignerName,
		Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature},
		Username:   "system:bootstrap:abcdef",
		Groups:     []string{"system:bootstrappers", BootstrapGroup, "system:authenticated"},
	}}
	for _, o := range opts {
		o(tmpl, csr)
	}
	// withKey passes a chosen private key through the template's PublicKey field.
	if chosen, ok := tmpl.PublicKey.(*ecdsa.PrivateKey); ok {
		key, tmpl.PublicKey = chosen, nil
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		t.Fatal(err)
	}
	csr.Spec.Request = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	return csr
}

func byAgent(cluster string) csrOpt {
	return func(_ *x509.CertificateRequest, c *certificatesv1.CertificateSigningRequest) {
		c.Spec.Username = musterv1.AgentUser(cluster)
		c.Spec.Groups = []string{musterv1.MembersGroup, musterv1.ClusterGroup(cluster), "system:authenticated"}
	}
}

func TestParseAgentCSR(t *testing.T) {
	cases := []struct {
		name    string
		opts    []csrOpt
		wantErr bool
	}{
		{name: "agent identity"},
		{name: "another signer", wantErr: true, opts: []csrOpt{func(_ *x509.CertificateRequest, c *certificatesv1.CertificateSigningRequest) {
			c.Spec.SignerName = certificatesv1.KubeletServingSignerName
		}}},
		{name: "common name of a plain user", wantErr: true, opts: []csrOpt{func(r *x509.CertificateRequest, _ *certificatesv1.CertificateSigningRequest) {
			r.Subject.CommonName = "admin"
		}}},
		{name: "extra organization such as system:masters", wantErr: true, opts: []csrOpt{func(r *x509.CertificateRequest, _ *certificatesv1.CertificateSigningRequest) {
			r.Subject.Organization = append(r.Subject.Organization, "system:masters")
		}}},
		{name: "organization of another cluster", wantErr: true, opts: []csrOpt{func(r *x509.CertificateRequest, _ *certificatesv1.CertificateSigningRequest) {
			r.Subject.Organization = []string{musterv1.MembersGroup, musterv1.ClusterGroup("c2")}
		}}},
		{name: "server usage", wantErr: true, opts: []csrOpt{func(_ *x509.CertificateRequest, c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Usages = append(c.Spec.Usages, certificatesv1.UsageServerAuth)
		}}},
		{name: "no client auth usage", wantErr: true, opts: []csrOpt{func(_ *x509.CertificateRequest, c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature}
		}}},
		{name: "subject alternative names", wantErr: true, opts: []csrOpt{func(r *x509.CertificateRequest, _ *certificatesv1.CertificateSigningRequest) {
			r.DNSNames = []string{"hub.example"}
		}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cluster, err := ParseAgentCSR(makeCSR(t, "c1", tc.opts...))
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseAgentCSR() error = %v, want error %v", err, tc.wantErr)
			}
			if err == nil && cluster != "c1" {
				t.Errorf("cluster = %q, want c1", cluster)
			}
		})
	}
}

// withKey makes the request for key instead of a fresh one.
func withKey(key *ecdsa.PrivateKey) csrOpt {
	return func(r *x509.CertificateRequest, _ *certificatesv1.CertificateSigningRequest) { r.PublicKey = key }
}

// presenting makes the request come from c1's agent authenticated with a certificate for
// holder (as the API server records it) and naming that certificate in its annotation;
// forge names another certificate in the annotation than the one presented.
func presenting(t *testing.T, holder *ecdsa.PrivateKey, forge bool) csrOpt {
	t.Helper()
	presented := selfSigned(t, holder)
	named := presented
	if forge {
		named = selfSigned(t, newKey(t))
	}
	return func(r *x509.CertificateRequest, c *certificatesv1.CertificateSigningRequest) {
		byAgent("c1")(r, c)
		sum := sha256.Sum256(presented)
		c.Spec.Extra = map[string]certificatesv1.ExtraValue{credentialIDExtra: {"X509SHA256=" + hex.EncodeToString(sum[:])}}
		c.Annotations = map[string]string{musterv1.CurrentCertificateAnnotation: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: named}))}
	}
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func selfSigned(t *testing.T, key *ecdsa.PrivateKey) []byte {
	t.Helper()
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: musterv1.AgentUser("c1")}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func fingerprint(t *testing.T, key *ecdsa.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return musterv1.KeyFingerprint(der)
}

func TestDecide(t *testing.T) {
	approved := func(_ *x509.CertificateRequest, c *certificatesv1.CertificateSigningRequest) {
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{musterv1.ApprovalCondition("x", "y")}
	}
	tokenFor := func(cluster string) csrOpt {
		return func(_ *x509.CertificateRequest, c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Groups = append(c.Spec.Groups, TokenClusterGroupPrefix+cluster)
		}
	}
	bound, other := newKey(t), newKey(t)
	boundFP := fingerprint(t, bound)
	cases := []struct {
		name  string
		csr   []csrOpt
		facts Facts
		want  Decision
	}{
		{name: "join before acceptance waits", want: Wait},
		{name: "join of an accepted cluster waits for the administrator", facts: Facts{Accepted: true}, want: Wait},
		{name: "administrator approves the first join of an accepted cluster", facts: Facts{Accepted: true, ByAdmin: true}, want: Approve},
		{name: "administrator cannot approve for a cluster that is not accepted", facts: Facts{ByAdmin: true}, want: Wait},
		{name: "auto-accept approves first joins of accepted clusters", facts: Facts{Accepted: true, AutoAccept: true}, want: Approve},
		{name: "a join with the bound key is approved", csr: []csrOpt{withKey(bound)}, facts: Facts{Accepted: true, ByAdmin: true, BoundKey: boundFP}, want: Approve},
		{name: "takeover: a join with another key is denied even by the administrator", facts: Facts{Accepted: true, ByAdmin: true, BoundKey: boundFP}, want: Deny},
		{name: "takeover: auto-accept denies a join with another key", facts: Facts{Accepted: true, AutoAccept: true, BoundKey: boundFP}, want: Deny},
		{name: "takeover of a denied cluster is denied too", facts: Facts{BoundKey: boundFP}, want: Deny},
		{name: "rekey by the administrator replaces the key", facts: Facts{Accepted: true, ByAdmin: true, Rekey: true, BoundKey: boundFP}, want: Approve},
		{name: "rekey without the administrator is nothing", facts: Facts{Accepted: true, AutoAccept: true, Rekey: true, BoundKey: boundFP}, want: Deny},
		{name: "a token bound to c1 joins c1", csr: []csrOpt{tokenFor("c1")}, facts: Facts{Accepted: true, ByAdmin: true}, want: Approve},
		{name: "a token bound to c2 cannot join c1", csr: []csrOpt{tokenFor("c2")}, facts: Facts{Accepted: true, ByAdmin: true}, want: Deny},
		{name: "rotation by the holder of the bound key is approved", csr: []csrOpt{presenting(t, bound, false)}, facts: Facts{Accepted: true, BoundKey: boundFP}, want: Approve},
		{name: "rotation whose key another approver has just bound is approved", csr: []csrOpt{presenting(t, other, false), withKey(bound)}, facts: Facts{Accepted: true, BoundKey: boundFP}, want: Approve},
		{name: "a request for the bound key waits while the cluster is not accepted", csr: []csrOpt{presenting(t, other, false), withKey(bound)}, facts: Facts{BoundKey: boundFP}, want: Wait},
		{name: "rotation with an old certificate after a rekey is denied", csr: []csrOpt{presenting(t, other, false)}, facts: Facts{Accepted: true, BoundKey: boundFP}, want: Deny},
		{name: "forged rotation naming a certificate it did not present is denied", csr: []csrOpt{presenting(t, other, true)}, facts: Facts{Accepted: true, BoundKey: boundFP}, want: Deny},
		{name: "rotation without the current certificate is denied", csr: []csrOpt{byAgent("c1")}, facts: Facts{Accepted: true, BoundKey: boundFP}, want: Deny},
		{name: "rotation of a cluster with no bound key is denied", csr: []csrOpt{presenting(t, bound, false)}, facts: Facts{Accepted: true}, want: Deny},
		{name: "renewal after deny waits", csr: []csrOpt{presenting(t, bound, false)}, facts: Facts{BoundKey: boundFP}, want: Wait},
		{name: "another cluster's agent cannot renew c1", csr: []csrOpt{byAgent("c2")}, facts: Facts{Accepted: true, ByAdmin: true}, want: Deny},
		{name: "a plain user's request is not ours to approve", csr: []csrOpt{func(_ *x509.CertificateRequest, c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Username, c.Spec.Groups = "bob", []string{"system:authenticated"}
		}}, facts: Facts{Accepted: true, AutoAccept: true}, want: Ignore},
		{name: "already approved", csr: []csrOpt{approved}, facts: Facts{Accepted: true, ByAdmin: true}, want: Ignore},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, why := Decide(makeCSR(t, "c1", tc.csr...), tc.facts)
			if got != tc.want {
				t.Errorf("Decide() = %s (%s), want %s", got, why, tc.want)
			}
		})
	}
}
