package identity

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/builders"
)

type csrOpt func(*x509.CertificateRequest, *certificatesv1.CertificateSigningRequest)

// Join ids of the tables: the cluster's current join, and an earlier or a new one.
const (
	joinA = "0123456789abcdef0123456789abcdef"
	joinB = "fedcba9876543210fedcba9876543210"
)

// makeCSR is a join request by a bootstrap token for cluster's agent identity, join joinB,
// for a day.
func makeCSR(t *testing.T, cluster string, opts ...csrOpt) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	key := builders.NewKey()
	tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: AgentUser(cluster), Organization: []string{
		MembersGroup, ClusterGroup(cluster), JoinGroup(cluster, joinB),
	}}}
	csr := builders.MakeCSR("").ExpirationSeconds(86400).
		Requester("system:bootstrap:abcdef", "system:bootstrappers", BootstrapGroup, "system:authenticated").Obj()
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
	csr.Spec.Request = builders.PEMRequest(der)
	return csr
}

// byAgent makes the request come from cluster's agent with a certificate of join
// joinID, renewing that join.
func byAgent(cluster, joinID string) csrOpt {
	return func(r *x509.CertificateRequest, c *certificatesv1.CertificateSigningRequest) {
		c.Spec.Username = AgentUser(cluster)
		c.Spec.Groups = []string{MembersGroup, ClusterGroup(cluster), JoinGroup(cluster, joinID), "system:authenticated"}
		asJoin(joinID)(r, c)
	}
}

// asJoin makes the request ask for a certificate of join joinID of c1.
func asJoin(joinID string) csrOpt {
	return withOrgs(MembersGroup, ClusterGroup("c1"), JoinGroup("c1", joinID))
}

func withOrgs(orgs ...string) csrOpt {
	return func(r *x509.CertificateRequest, _ *certificatesv1.CertificateSigningRequest) {
		r.Subject.Organization = orgs
	}
}

// lasting sets the lifetime asked for; zero asks for none.
func lasting(d time.Duration) csrOpt {
	return func(_ *x509.CertificateRequest, c *certificatesv1.CertificateSigningRequest) {
		c.Spec.ExpirationSeconds = nil
		if d > 0 {
			s := int32(d / time.Second)
			c.Spec.ExpirationSeconds = &s
		}
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
		{name: "organization of another cluster", wantErr: true, opts: []csrOpt{withOrgs(MembersGroup, ClusterGroup("c2"), JoinGroup("c2", joinB))}},
		{name: "join group of another cluster", wantErr: true, opts: []csrOpt{withOrgs(MembersGroup, ClusterGroup("c1"), JoinGroup("c2", joinB))}},
		{name: "no join group", wantErr: true, opts: []csrOpt{withOrgs(MembersGroup, ClusterGroup("c1"))}},
		{name: "two join groups", wantErr: true, opts: []csrOpt{withOrgs(MembersGroup, ClusterGroup("c1"), JoinGroup("c1", joinA), JoinGroup("c1", joinB))}},
		{name: "a join group twice", wantErr: true, opts: []csrOpt{withOrgs(MembersGroup, ClusterGroup("c1"), JoinGroup("c1", joinB), JoinGroup("c1", joinB))}},
		{name: "join id in capitals", wantErr: true, opts: []csrOpt{withOrgs(MembersGroup, ClusterGroup("c1"), JoinGroup("c1", "0123456789ABCDEF0123456789ABCDEF"))}},
		{name: "short join id", wantErr: true, opts: []csrOpt{withOrgs(MembersGroup, ClusterGroup("c1"), JoinGroup("c1", "0123"))}},
		{name: "join group with a suffix", wantErr: true, opts: []csrOpt{withOrgs(MembersGroup, ClusterGroup("c1"), JoinGroup("c1", joinB)+":x")}},
		{name: "members group missing", wantErr: true, opts: []csrOpt{withOrgs(ClusterGroup("c1"), JoinGroup("c1", joinB), "muster:member:c1:join")}},
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
			req, err := ParseAgentCSR(makeCSR(t, "c1", tc.opts...))
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseAgentCSR() error = %v, want error %v", err, tc.wantErr)
			}
			if err == nil && (req.Cluster != "c1" || req.JoinID != joinB) {
				t.Errorf("ParseAgentCSR() = %+v, want cluster c1, join %s", req, joinB)
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
	presented := builders.SelfSigned(holder, AgentUser("c1"))
	named := presented
	if forge {
		named = builders.SelfSigned(builders.NewKey(), AgentUser("c1"))
	}
	return func(r *x509.CertificateRequest, c *certificatesv1.CertificateSigningRequest) {
		byAgent("c1", joinA)(r, c)
		sum := sha256.Sum256(presented)
		c.Spec.Extra = map[string]certificatesv1.ExtraValue{credentialIDExtra: {"X509SHA256=" + hex.EncodeToString(sum[:])}}
		c.Annotations = map[string]string{CurrentCertificateAnnotation: builders.PEMCertificate(named)}
	}
}

// fingerprint names key as the hub does.
func fingerprint(key *ecdsa.PrivateKey) string { return KeyFingerprint(builders.SPKI(key)) }

func TestDecide(t *testing.T) {
	approved := func(_ *x509.CertificateRequest, c *certificatesv1.CertificateSigningRequest) {
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{ApprovalCondition("x", "y")}
	}
	tokenFor := func(cluster string) csrOpt {
		return func(_ *x509.CertificateRequest, c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Groups = append(c.Spec.Groups, TokenClusterGroupPrefix+cluster)
		}
	}
	bound, other := builders.NewKey(), builders.NewKey()
	boundFP := fingerprint(bound)
	// joined is an accepted cluster whose current join is joinA, bound to key bound.
	joined := Facts{Accepted: true, BoundKey: boundFP, JoinID: joinA}
	with := func(f Facts, edit func(*Facts)) Facts { edit(&f); return f }
	cases := []struct {
		name       string
		csr        []csrOpt
		facts      Facts
		want       Decision
		wantReason string
	}{
		{name: "join before acceptance waits", want: Wait},
		{name: "join of an accepted cluster waits for the administrator", facts: Facts{Accepted: true}, want: Wait},
		{name: "administrator approves the first join of an accepted cluster", facts: Facts{Accepted: true, ByAdmin: true}, want: Approve},
		{name: "administrator cannot approve for a cluster that is not accepted", facts: Facts{ByAdmin: true}, want: Wait},
		{name: "auto-accept approves first joins of accepted clusters", facts: Facts{Accepted: true, AutoAccept: true}, want: Approve},
		{name: "a join with the bound key is approved", csr: []csrOpt{withKey(bound)}, facts: with(joined, func(f *Facts) { f.ByAdmin = true }), want: Approve},
		{name: "a re-join after a deny (no current join) with the bound key is approved", csr: []csrOpt{withKey(bound)},
			facts: Facts{Accepted: true, ByAdmin: true, BoundKey: boundFP}, want: Approve},
		{name: "a join recorded but not yet approved is approved", csr: []csrOpt{withKey(bound), asJoin(joinA)}, facts: with(joined, func(f *Facts) { f.ByAdmin = true }), want: Approve},
		{name: "takeover: a join with another key is denied even by the administrator", facts: with(joined, func(f *Facts) { f.ByAdmin = true }), want: Deny, wantReason: musterv1.ReasonAgentKeyMismatch},
		{name: "takeover: auto-accept denies a join with another key", facts: with(joined, func(f *Facts) { f.AutoAccept = true }), want: Deny},
		{name: "takeover of a denied cluster is denied too", facts: Facts{BoundKey: boundFP}, want: Deny},
		{name: "rekey by the administrator replaces the key", facts: with(joined, func(f *Facts) { f.ByAdmin, f.Rekey = true, true }), want: Approve},
		{name: "rekey reusing the current join id is denied", csr: []csrOpt{asJoin(joinA)}, facts: with(joined, func(f *Facts) { f.ByAdmin, f.Rekey = true, true }),
			want: Deny, wantReason: musterv1.ReasonAgentJoinMismatch},
		{name: "rekey without the administrator is nothing", facts: with(joined, func(f *Facts) { f.AutoAccept, f.Rekey = true, true }), want: Deny},
		{name: "a token bound to c1 joins c1", csr: []csrOpt{tokenFor("c1")}, facts: Facts{Accepted: true, ByAdmin: true}, want: Approve},
		{name: "a token bound to c2 cannot join c1", csr: []csrOpt{tokenFor("c2")}, facts: Facts{Accepted: true, ByAdmin: true}, want: Deny},
		{name: "rotation by the holder of the bound key is approved", csr: []csrOpt{presenting(t, bound, false)}, facts: joined, want: Approve},
		{name: "rotation whose key another approver has just bound is approved", csr: []csrOpt{presenting(t, other, false), withKey(bound)}, facts: joined, want: Approve},
		{name: "rotation of a certificate of an earlier join is denied", csr: []csrOpt{presenting(t, bound, false)}, facts: with(joined, func(f *Facts) { f.JoinID = joinB }),
			want: Deny, wantReason: musterv1.ReasonAgentJoinMismatch},
		{name: "rotation asking for another join than its certificate's is denied", csr: []csrOpt{presenting(t, bound, false), asJoin(joinB)}, facts: joined,
			want: Deny, wantReason: musterv1.ReasonAgentJoinMismatch},
		{name: "rotation into the current join by a certificate of an earlier join is denied", csr: []csrOpt{presenting(t, bound, false), asJoin(joinB)},
			facts: with(joined, func(f *Facts) { f.JoinID = joinB }), want: Deny, wantReason: musterv1.ReasonAgentJoinMismatch},
		{name: "rotation after a deny and re-accept, before the agent joins again, is denied", csr: []csrOpt{presenting(t, bound, false)},
			facts: with(joined, func(f *Facts) { f.JoinID = "" }), want: Deny, wantReason: musterv1.ReasonAgentJoinMismatch},
		{name: "a request for the bound key while the cluster is denied is denied", csr: []csrOpt{presenting(t, other, false), withKey(bound)},
			facts: with(joined, func(f *Facts) { f.Accepted = false }), want: Deny, wantReason: musterv1.ReasonAgentJoinMismatch},
		{name: "rotation with an old certificate after a rekey is denied", csr: []csrOpt{presenting(t, other, false)}, facts: joined, want: Deny, wantReason: musterv1.ReasonAgentKeyMismatch},
		{name: "forged rotation naming a certificate it did not present is denied", csr: []csrOpt{presenting(t, other, true)}, facts: joined, want: Deny},
		{name: "rotation without the current certificate is denied", csr: []csrOpt{byAgent("c1", joinA)}, facts: joined, want: Deny},
		{name: "rotation of a cluster with no bound key is denied", csr: []csrOpt{presenting(t, bound, false)}, facts: Facts{Accepted: true, JoinID: joinA}, want: Deny},
		{name: "renewal after deny is denied", csr: []csrOpt{presenting(t, bound, false)}, facts: Facts{BoundKey: boundFP}, want: Deny},
		{name: "another cluster's agent cannot renew c1", csr: []csrOpt{byAgent("c2", joinA), asJoin(joinA)}, facts: Facts{Accepted: true, ByAdmin: true}, want: Deny},
		{name: "a plain user's request is not ours to approve", csr: []csrOpt{func(_ *x509.CertificateRequest, c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Username, c.Spec.Groups = "bob", []string{"system:authenticated"}
		}}, facts: Facts{Accepted: true, AutoAccept: true}, want: Ignore},
		{name: "already approved", csr: []csrOpt{approved}, facts: Facts{Accepted: true, ByAdmin: true}, want: Ignore},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(makeCSR(t, "c1", tc.csr...), tc.facts)
			if got.Decision != tc.want || (tc.wantReason != "" && got.Reason != tc.wantReason) {
				t.Errorf("Decide() = %s %s (%s), want %s %s", got.Decision, got.Reason, got.Why, tc.want, tc.wantReason)
			}
			if (got.Decision == Deny) != (got.Reason != "") {
				t.Errorf("Decide() = %+v: a denial, and only a denial, has a reason", got)
			}
		})
	}
}

// The hub approves no certificate longer than its maximum, nor one that asks for no
// lifetime (the signer's maximum, a year by default, would apply), whoever asks.
func TestDecideCertificateLifetime(t *testing.T) {
	bound := builders.NewKey()
	joined := Facts{Accepted: true, BoundKey: fingerprint(bound), JoinID: joinA, ByAdmin: true}
	cases := []struct {
		name     string
		lifetime time.Duration // zero: no expirationSeconds
		max      time.Duration // zero: the default, 24h
		rotation bool
		want     Decision
	}{
		{name: "a join for a day, the default maximum", lifetime: 24 * time.Hour, want: Approve},
		{name: "a join for ten minutes", lifetime: 10 * time.Minute, want: Approve},
		{name: "a join for a day and a second", lifetime: 24*time.Hour + time.Second, want: Deny},
		{name: "a join for a year", lifetime: 365 * 24 * time.Hour, want: Deny},
		{name: "a join asking for no lifetime", want: Deny},
		{name: "a rotation for a year", lifetime: 365 * 24 * time.Hour, rotation: true, want: Deny},
		{name: "a rotation asking for no lifetime", rotation: true, want: Deny},
		{name: "a rotation within a lower maximum", lifetime: time.Hour, max: time.Hour, rotation: true, want: Approve},
		{name: "a join above a lower maximum", lifetime: 2 * time.Hour, max: time.Hour, want: Deny},
		{name: "a join within a higher maximum", lifetime: 7 * 24 * time.Hour, max: 30 * 24 * time.Hour, want: Approve},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := []csrOpt{withKey(bound), lasting(tc.lifetime)}
			if tc.rotation {
				opts = append(opts, presenting(t, bound, false))
			}
			f := joined
			f.MaxLifetime = tc.max
			got := Decide(makeCSR(t, "c1", opts...), f)
			if got.Decision != tc.want {
				t.Fatalf("Decide() = %s (%s), want %s", got.Decision, got.Why, tc.want)
			}
			if got.Decision == Deny && got.Reason != musterv1.ReasonCertificateLifetime {
				t.Errorf("denied with reason %s (%s), want %s", got.Reason, got.Why, musterv1.ReasonCertificateLifetime)
			}
		})
	}
}
