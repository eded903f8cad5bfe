package identity

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"slices"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/builders"
)

// The request an agent builds is the one the hub accepts, for the agent's key.
func TestNewAgentRequestIsAccepted(t *testing.T) {
	key := builders.NewKey()
	request, err := NewAgentRequest("c1", joinA, key)
	if err != nil {
		t.Fatal(err)
	}
	csr := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
		Request: request, SignerName: certificatesv1.KubeAPIServerClientSignerName,
		Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
	}}
	got, err := ParseAgentCSR(csr)
	if err != nil {
		t.Fatalf("ParseAgentCSR(NewAgentRequest()) error = %v", err)
	}
	if want := (AgentRequest{Cluster: "c1", JoinID: joinA, Key: fingerprint(key)}); got != want {
		t.Errorf("ParseAgentCSR(NewAgentRequest()) = %+v, want %+v", got, want)
	}
	if k, err := RequestKey(csr); err != nil || k != fingerprint(key) {
		t.Errorf("RequestKey() = %q, %v, want %s", k, err, fingerprint(key))
	}
}

func TestJoinIDOf(t *testing.T) {
	cases := []struct {
		name   string
		groups []string
		want   string
		wantOK bool
	}{
		{name: "one join group", groups: []string{MembersGroup, ClusterGroup("c1"), JoinGroup("c1", joinA)}, want: joinA, wantOK: true},
		{name: "none", groups: []string{MembersGroup, ClusterGroup("c1")}},
		{name: "another cluster's", groups: []string{JoinGroup("c2", joinA)}},
		{name: "a cluster whose name extends c1", groups: []string{JoinGroup("c1x", joinA)}},
		{name: "two", groups: []string{JoinGroup("c1", joinA), JoinGroup("c1", joinB)}},
		{name: "the same twice", groups: []string{JoinGroup("c1", joinA), JoinGroup("c1", joinA)}},
		{name: "not a join id", groups: []string{JoinGroup("c1", "xyz")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := JoinIDOf("c1", tc.groups)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("JoinIDOf(c1, %v) = %q, %v, want %q, %v", tc.groups, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestTokenCluster(t *testing.T) {
	if got, ok := TokenCluster([]string{"system:bootstrappers", BootstrapGroup, TokenClusterGroupPrefix + "c1"}); !ok || got != "c1" {
		t.Errorf("TokenCluster(bound to c1) = %q, %v", got, ok)
	}
	if got, ok := TokenCluster([]string{"system:bootstrappers", BootstrapGroup}); ok {
		t.Errorf("TokenCluster(unbound) = %q, %v, want none", got, ok)
	}
}

// Binding records the key and join once; accepting a denied cluster and denying one both
// forget the join, so no certificate of it works again.
func TestBindAcceptDeny(t *testing.T) {
	mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}
	req := AgentRequest{Cluster: "c1", JoinID: joinA, Key: "sha256:aa"}
	if !Bind(mc, req) || mc.Annotations[AgentKeyAnnotation] != req.Key || mc.Annotations[AgentJoinAnnotation] != joinA {
		t.Fatalf("Bind() left annotations %v", mc.Annotations)
	}
	if Bind(mc, req) {
		t.Error("Bind() of the bound key and join changed the cluster")
	}
	AcceptCluster(mc)
	if mc.Annotations[AgentJoinAnnotation] != "" || !mc.Spec.Accepted {
		t.Errorf("AcceptCluster() of a cluster not accepted kept join %q", mc.Annotations[AgentJoinAnnotation])
	}
	Bind(mc, req)
	AcceptCluster(mc)
	if mc.Annotations[AgentJoinAnnotation] != joinA {
		t.Error("AcceptCluster() of an accepted cluster forgot its join")
	}
	DenyCluster(mc)
	if mc.Spec.Accepted || mc.Annotations[AgentJoinAnnotation] != "" || mc.Annotations[AgentKeyAnnotation] != req.Key {
		t.Errorf("DenyCluster() = accepted %v, annotations %v; want not accepted, the key kept and the join forgotten", mc.Spec.Accepted, mc.Annotations)
	}
}

// FuzzParseAgentCSR: the request bytes, signer and usages come from a member or a token
// holder. Parsing never panics, decides the same twice, and a request it accepts asks for
// exactly an agent identity: signed by its key, the agent's user, the three groups of one
// join of that cluster, no subject alternative names, client usages only.
func FuzzParseAgentCSR(f *testing.F) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	request := func(cn string, orgs ...string) []byte {
		der, _ := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: orgs}}, key)
		return der
	}
	good := request(AgentUser("c1"), MembersGroup, ClusterGroup("c1"), JoinGroup("c1", joinA))
	signer := certificatesv1.KubeAPIServerClientSignerName
	f.Add(good, false, signer, "client auth\ndigital signature")
	f.Add(good, true, signer, "client auth")
	f.Add(good, false, signer, "client auth\nserver auth")
	f.Add(request(AgentUser("c1"), MembersGroup, ClusterGroup("c1"), JoinGroup("c1", joinA), "system:masters"), false, signer, "client auth")
	f.Add(request("admin", "system:masters"), false, "kubernetes.io/kubelet-serving", "")
	f.Add([]byte("junk"), false, signer, "client auth")
	f.Fuzz(func(t *testing.T, der []byte, raw bool, signerName, usages string) {
		csr := fuzzRequest{der: der, raw: raw, usages: usages}.csr()
		csr.Spec.SignerName = signerName
		req, err := ParseAgentCSR(csr)
		again, errAgain := ParseAgentCSR(csr)
		if req != again || (err == nil) != (errAgain == nil) {
			t.Fatalf("ParseAgentCSR() = %+v, %v, then %+v, %v", req, err, again, errAgain)
		}
		if err == nil {
			checkAgentRequest(t, csr, req)
		} else if req != (AgentRequest{}) {
			t.Fatalf("ParseAgentCSR() refused the request (%v) but returned %+v", err, req)
		}
	})
}

// checkAgentRequest fails t unless csr, accepted as req, satisfies every rule of ParseAgentCSR.
func checkAgentRequest(t *testing.T, csr *certificatesv1.CertificateSigningRequest, req AgentRequest) {
	t.Helper()
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		t.Fatalf("accepted signer %q", csr.Spec.SignerName)
	}
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		t.Fatal("accepted a request that is not a PEM certificate request")
	}
	parsed, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil || parsed.CheckSignature() != nil {
		t.Fatalf("accepted a request that does not parse or is not signed by its key: %v", err)
	}
	orgs := slices.Sorted(slices.Values(parsed.Subject.Organization))
	want := slices.Sorted(slices.Values([]string{MembersGroup, ClusterGroup(req.Cluster), JoinGroup(req.Cluster, req.JoinID)}))
	if parsed.Subject.CommonName != AgentUser(req.Cluster) || !slices.Equal(orgs, want) || !ValidJoinID(req.JoinID) {
		t.Fatalf("accepted subject %v as %+v", parsed.Subject, req)
	}
	if strings.ContainsAny(req.Cluster, ":/ ") || req.Cluster == "" {
		t.Fatalf("accepted cluster name %q", req.Cluster)
	}
	if len(parsed.DNSNames)+len(parsed.IPAddresses)+len(parsed.EmailAddresses)+len(parsed.URIs) > 0 {
		t.Fatal("accepted subject alternative names")
	}
	if !slices.Contains(csr.Spec.Usages, certificatesv1.UsageClientAuth) {
		t.Fatal("accepted a request without client auth")
	}
	for _, u := range csr.Spec.Usages {
		if !slices.Contains(allowedUsages, u) {
			t.Fatalf("accepted usage %q", u)
		}
	}
	if req.Key != KeyFingerprint(parsed.RawSubjectPublicKeyInfo) {
		t.Fatalf("accepted key %s, but the request is for %s", req.Key, KeyFingerprint(parsed.RawSubjectPublicKeyInfo))
	}
}
