package registration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
)

type csrOpt func(*x509.CertificateRequest, *certificatesv1.CertificateSigningRequest)

func makeCSR(t *testing.T, cluster string, opts ...csrOpt) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: AgentUser(cluster), Organization: []string{MembersGroup, ClusterGroup(cluster)}}}
	csr := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
		SignerName: certificatesv1.KubeAPIServerClientSignerName,
		Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature},
		Username:   "system:bootstrap:abcdef",
		Groups:     []string{"system:bootstrappers", BootstrapGroup, "system:authenticated"},
	}}
	for _, o := range opts {
		o(tmpl, csr)
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
		c.Spec.Username = AgentUser(cluster)
		c.Spec.Groups = []string{MembersGroup, ClusterGroup(cluster), "system:authenticated"}
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
			r.Subject.Organization = []string{MembersGroup, ClusterGroup("c2")}
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

func TestDecide(t *testing.T) {
	approved := func(_ *x509.CertificateRequest, c *certificatesv1.CertificateSigningRequest) {
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{ApprovalCondition("x", "y")}
	}
	cases := []struct {
		name                          string
		csr                           []csrOpt
		accepted, autoAccept, byAdmin bool
		want                          Decision
	}{
		{name: "join before acceptance waits", want: Wait},
		{name: "join of an accepted cluster waits for the administrator", accepted: true, want: Wait},
		{name: "administrator approves a join of an accepted cluster", accepted: true, byAdmin: true, want: Approve},
		{name: "administrator cannot approve for a cluster that is not accepted", byAdmin: true, want: Wait},
		{name: "auto-accept approves joins of accepted clusters", accepted: true, autoAccept: true, want: Approve},
		{name: "renewal by the agent is approved", csr: []csrOpt{byAgent("c1")}, accepted: true, want: Approve},
		{name: "renewal after deny waits", csr: []csrOpt{byAgent("c1")}, want: Wait},
		{name: "another cluster's agent cannot renew c1", csr: []csrOpt{byAgent("c2")}, accepted: true, byAdmin: true, want: Ignore},
		{name: "a plain user's request is not ours to approve", csr: []csrOpt{func(_ *x509.CertificateRequest, c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Username, c.Spec.Groups = "bob", []string{"system:authenticated"}
		}}, accepted: true, autoAccept: true, want: Ignore},
		{name: "already approved", csr: []csrOpt{approved}, accepted: true, byAdmin: true, want: Ignore},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, why := Decide(makeCSR(t, "c1", tc.csr...), tc.accepted, tc.autoAccept, tc.byAdmin)
			if got != tc.want {
				t.Errorf("Decide() = %s (%s), want %s", got, why, tc.want)
			}
		})
	}
}
