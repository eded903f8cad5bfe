package identity

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
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// fuzzRequest is the attacker's part of a certificate request: everything a member or a
// token holder chooses, or the API server records about them, as raw values.
type fuzzRequest struct {
	der        []byte // the PKCS#10 request, PEM-wrapped unless raw
	raw        bool
	username   string
	groups     string // newline-separated
	expiration int64  // seconds; negative: none
	current    []byte // the DER of the certificate named in CurrentCertificateAnnotation
	presented  bool   // the API server recorded current as the requester's credential
	usages     string // newline-separated
}

func (r fuzzRequest) csr() *certificatesv1.CertificateSigningRequest {
	request := r.der
	if !r.raw {
		request = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: r.der})
	}
	csr := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
		Request: request, SignerName: certificatesv1.KubeAPIServerClientSignerName, Username: r.username,
	}}
	if r.groups != "" {
		csr.Spec.Groups = strings.Split(r.groups, "\n")
	}
	for _, u := range strings.Split(r.usages, "\n") {
		csr.Spec.Usages = append(csr.Spec.Usages, certificatesv1.KeyUsage(u))
	}
	if r.expiration >= 0 {
		s := int32(min(r.expiration, 1<<31-1))
		csr.Spec.ExpirationSeconds = &s
	}
	if len(r.current) > 0 {
		csr.Annotations = map[string]string{CurrentCertificateAnnotation: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.current}))}
		if r.presented {
			sum := sha256.Sum256(r.current)
			csr.Spec.Extra = map[string]certificatesv1.ExtraValue{credentialIDExtra: {"X509SHA256=" + hex.EncodeToString(sum[:])}}
		}
	}
	return csr
}

// FuzzDecide: the bytes of a certificate request and everything its requester controls
// are attacker input. Parsing and deciding never panic, decide the same twice, and an
// approval always satisfies the rules it stands for: the exact agent subject, a bounded
// lifetime, an accepted cluster, the current join for a rotation by the bound key's holder,
// and a join only by an administrator or auto-accept, for the bound key unless rekeyed.
func FuzzDecide(f *testing.F) {
	const joinA = "0123456789abcdef0123456789abcdef"
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	spki, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	bound := KeyFingerprint(spki)
	request := func(orgs ...string) []byte {
		der, _ := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: AgentUser("c1"), Organization: orgs}}, key)
		return der
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: AgentUser("c1")}, NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<32, 0)}
	current, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	good := request(MembersGroup, ClusterGroup("c1"), JoinGroup("c1", joinA))
	usages := "client auth\ndigital signature"
	agent := strings.Join([]string{MembersGroup, ClusterGroup("c1"), JoinGroup("c1", joinA)}, "\n")
	boot := BootstrapGroup + "\n" + TokenClusterGroupPrefix + "c1"
	f.Add(good, false, "system:bootstrap:abcdef", boot, int64(86400), []byte(nil), false, usages, true, true, false, false, bound, joinA, int64(0))
	f.Add(good, false, AgentUser("c1"), agent, int64(3600), current, true, usages, true, false, false, false, bound, joinA, int64(3600))
	f.Add(good, false, AgentUser("c1"), agent, int64(-1), current, false, usages, true, false, true, true, "", "", int64(-5))
	f.Add(request(MembersGroup, ClusterGroup("c1"), "system:masters"), true, "x", "", int64(1<<40), []byte("junk"), true, "server auth", false, true, true, true, "sha256:00", "zz", int64(1<<40))
	f.Fuzz(func(t *testing.T, der []byte, raw bool, username, groups string, expiration int64, cert []byte, presented bool, usages string,
		accepted, byAdmin, autoAccept, rekey bool, boundKey, joinID string, maxSeconds int64) {
		r := fuzzRequest{der: der, raw: raw, username: username, groups: groups, expiration: expiration, current: cert, presented: presented, usages: usages}
		facts := Facts{Accepted: accepted, ByAdmin: byAdmin, AutoAccept: autoAccept, Rekey: rekey, BoundKey: boundKey, JoinID: joinID,
			MaxLifetime: time.Duration(max(min(maxSeconds, 1<<33), -1)) * time.Second}
		csr := r.csr()
		v := Decide(csr, facts)
		// The decision and its reason are the outcome; Why may quote the x509 parser's
		// error text, which for some malformed requests prints a pointer.
		if again := Decide(csr, facts); again.Decision != v.Decision || again.Reason != v.Reason {
			t.Fatalf("Decide() = %+v, then %+v", v, again)
		}
		if (v.Decision == Deny) != (v.Reason != "") {
			t.Fatalf("Decide() = %+v: a denial, and only a denial, has a reason", v)
		}
		if v.Decision == Approve {
			checkApproval(t, csr, facts)
		}
	})
}

// checkApproval fails t unless the approved csr satisfies every rule of Decide.
func checkApproval(t *testing.T, csr *certificatesv1.CertificateSigningRequest, f Facts) {
	t.Helper()
	req, err := ParseAgentCSR(csr)
	if err != nil {
		t.Fatalf("approved an unparsable request: %v", err)
	}
	block, _ := pem.Decode(csr.Spec.Request)
	parsed, _ := x509.ParseCertificateRequest(block.Bytes)
	orgs := slices.Sorted(slices.Values(parsed.Subject.Organization))
	want := slices.Sorted(slices.Values([]string{MembersGroup, ClusterGroup(req.Cluster), JoinGroup(req.Cluster, req.JoinID)}))
	if parsed.Subject.CommonName != AgentUser(req.Cluster) || !slices.Equal(orgs, want) {
		t.Fatalf("approved subject %v", parsed.Subject)
	}
	limit := f.MaxLifetime
	if limit <= 0 {
		limit = DefaultMaxCertificateLifetime
	}
	if csr.Spec.ExpirationSeconds == nil || time.Duration(*csr.Spec.ExpirationSeconds)*time.Second > limit {
		t.Fatalf("approved a lifetime of %v seconds over %s", csr.Spec.ExpirationSeconds, limit)
	}
	if !f.Accepted {
		t.Fatal("approved a request of a cluster that is not accepted")
	}
	switch RequesterOf(csr, req.Cluster) {
	case RequesterAgent:
		holder, _ := JoinIDOf(req.Cluster, csr.Spec.Groups)
		if f.JoinID == "" || req.JoinID != f.JoinID || holder != f.JoinID {
			t.Fatalf("approved a rotation of join %q by a certificate of join %q; the current join is %q", req.JoinID, holder, f.JoinID)
		}
		if holderKey, _ := RequesterKey(csr); req.Key != f.BoundKey && holderKey != f.BoundKey {
			t.Fatal("approved a rotation neither for the bound key nor by its holder")
		}
	case RequesterBootstrap:
		if !f.ByAdmin && !f.AutoAccept {
			t.Fatal("approved a join without an administrator or auto-accept")
		}
		if only, ok := TokenCluster(csr.Spec.Groups); ok && only != req.Cluster {
			t.Fatalf("approved a join of %s with a token bound to %s", req.Cluster, only)
		}
		if f.BoundKey != "" && req.Key != f.BoundKey && (!f.ByAdmin || !f.Rekey) {
			t.Fatal("approved a join for another key than the bound one without a rekey")
		}
	default:
		t.Fatalf("approved a request by %s", csr.Spec.Username)
	}
}
