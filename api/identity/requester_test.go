package identity

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/musterhq/muster/internal/testing/builders"
)

// TestRequesterKey: the requester's key is believed only from a certificate whose hash
// the API server recorded as the credential the request came with.
func TestRequesterKey(t *testing.T) {
	holder := builders.NewKey()
	cert := builders.SelfSigned(holder, AgentUser("c1"))
	seen := func(der []byte) string {
		sum := sha256.Sum256(der)
		return "X509SHA256=" + hex.EncodeToString(sum[:])
	}
	other := builders.SelfSigned(builders.NewKey(), AgentUser("c1"))
	notACert := []byte("not a certificate")
	cases := []struct {
		name       string
		credential []string
		annotation string
		want, err  string
	}{
		{name: "the presented certificate", credential: []string{seen(cert)}, annotation: builders.PEMCertificate(cert), want: fingerprint(holder)},
		{name: "the last of several credential ids counts", credential: []string{"token=abc", seen(other), seen(cert)},
			annotation: builders.PEMCertificate(cert), want: fingerprint(holder)},
		{name: "a token, not a certificate", credential: []string{"JTI=abc"}, annotation: builders.PEMCertificate(cert),
			err: "recorded no client certificate"},
		{name: "no credential recorded", annotation: builders.PEMCertificate(cert), err: "recorded no client certificate"},
		{name: "another certificate named than presented", credential: []string{seen(cert)}, annotation: builders.PEMCertificate(other),
			err: "is not the certificate the requester authenticated with"},
		{name: "no annotation", credential: []string{seen(cert)}, err: "holds no PEM certificate"},
		{name: "a PEM block of another type", credential: []string{seen(cert)},
			annotation: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: cert})), err: "holds no PEM certificate"},
		{name: "bytes hashed as recorded that are no certificate", credential: []string{seen(notACert)},
			annotation: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: notACert})), err: "parsing the requester's certificate"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			csr := builders.MakeCSR("").Obj()
			if tc.annotation != "" {
				csr.Annotations = map[string]string{CurrentCertificateAnnotation: tc.annotation}
			}
			if tc.credential != nil {
				csr.Spec.Extra = map[string]certificatesv1.ExtraValue{credentialIDExtra: tc.credential}
			}
			got, err := RequesterKey(csr)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("RequesterKey() = %q, %v; want an error containing %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("RequesterKey() = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestRequesterOf(t *testing.T) {
	cases := []struct {
		name     string
		username string
		groups   []string
		want     Requester
	}{
		{"the cluster's agent", AgentUser("c1"), []string{MembersGroup, ClusterGroup("c1"), "system:authenticated"}, RequesterAgent},
		{"the agent's user name without its cluster group", AgentUser("c1"), []string{MembersGroup}, RequesterOther},
		{"another cluster's agent", AgentUser("c2"), []string{MembersGroup, ClusterGroup("c2")}, RequesterOther},
		{"an agent of c2 holding c1's group", AgentUser("c2"), []string{ClusterGroup("c1")}, RequesterOther},
		{"a Muster bootstrap token", "system:bootstrap:abcdef", []string{"system:bootstrappers", BootstrapGroup}, RequesterBootstrap},
		{"a token bound to a cluster", "system:bootstrap:abcdef", []string{BootstrapGroup, TokenClusterGroupPrefix + "c1"}, RequesterBootstrap},
		{"another bootstrap token", "system:bootstrap:abcdef", []string{"system:bootstrappers"}, RequesterOther},
		{"an administrator", "admin", []string{"system:masters"}, RequesterOther},
	}
	for _, tc := range cases {
		csr := builders.MakeCSR("").Requester(tc.username, tc.groups...).Obj()
		if got := RequesterOf(csr, "c1"); got != tc.want {
			t.Errorf("%s: RequesterOf() = %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestUnreadableRequests: a request that is not a signed PKCS#10 request is refused, with
// the reason, before anything in it is believed.
func TestUnreadableRequests(t *testing.T) {
	good := makeCSR(t, "c1")
	block, _ := pem.Decode(good.Spec.Request)
	tampered := append([]byte(nil), block.Bytes...)
	tampered[len(tampered)-1] ^= 0xff
	cases := []struct {
		name     string
		request  []byte
		parseErr string
		keyErr   string
	}{
		{"not PEM", []byte("hello"), "not a PEM certificate request", "not PEM"},
		{"a PEM certificate", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: block.Bytes}), "not a PEM certificate request", ""},
		{"PEM of no request", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: []byte{1, 2, 3}}), "parsing certificate request", "parsing certificate request"},
		{"a signature that does not match", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: tampered}), "certificate request signature", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			csr := good.DeepCopy()
			csr.Spec.Request = tc.request
			if _, err := ParseAgentCSR(csr); err == nil || !strings.Contains(err.Error(), tc.parseErr) {
				t.Errorf("ParseAgentCSR() error = %v, want one containing %q", err, tc.parseErr)
			}
			// RequestKey only names the key: it reads what parses, signed or not.
			_, err := RequestKey(csr)
			if tc.keyErr == "" && err != nil || tc.keyErr != "" && (err == nil || !strings.Contains(err.Error(), tc.keyErr)) {
				t.Errorf("RequestKey() error = %v, want %q", err, tc.keyErr)
			}
		})
	}
	if v := Decide(&certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
		SignerName: certificatesv1.KubeAPIServerClientSignerName, Request: []byte("hello"),
		Username: "system:bootstrap:abcdef", Groups: []string{BootstrapGroup},
	}}, Facts{Accepted: true, ByAdmin: true}); v.Decision != Ignore || !strings.Contains(v.Why, "not a PEM certificate request") {
		t.Errorf("Decide() of an unreadable request = %+v, want Ignore, saying why", v)
	}
}

// TestConditions: approvals and denials are the True conditions of the API server's
// CSR status, with the reason and message given; a CSR carrying one is decided, and no
// approver looks at it again.
func TestConditions(t *testing.T) {
	for _, tc := range []struct {
		got  certificatesv1.CertificateSigningRequestCondition
		want certificatesv1.RequestConditionType
	}{
		{ApprovalCondition("AutoApproved", "accepted cluster"), certificatesv1.CertificateApproved},
		{DenialCondition("KeyMismatch", "another key"), certificatesv1.CertificateDenied},
	} {
		want := certificatesv1.CertificateSigningRequestCondition{Type: tc.want, Status: corev1.ConditionTrue, Reason: tc.got.Reason, Message: tc.got.Message}
		if tc.got != want || tc.got.Reason == "" || tc.got.Message == "" {
			t.Errorf("condition = %+v, want %+v with the reason and message given", tc.got, want)
		}
		csr := makeCSR(t, "c1")
		facts := Facts{Accepted: true, ByAdmin: true, MaxLifetime: DefaultMaxCertificateLifetime}
		if v := Decide(csr, facts); v.Decision != Approve {
			t.Fatalf("Decide() of the undecided CSR = %+v, want Approve", v)
		}
		csr.Status.Conditions = append(csr.Status.Conditions, tc.got)
		if v := Decide(csr, facts); v.Decision != Ignore || v.Why != "already decided" {
			t.Errorf("Decide() of a CSR with condition %s = %+v, want Ignore: already decided", tc.want, v)
		}
	}
}
