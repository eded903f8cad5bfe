package registration

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/musterhq/muster/api/identity"
)

func TestIssuedCertificate(t *testing.T) {
	key, other := newKey(t), newKey(t)
	spki, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	fp := identity.KeyFingerprint(spki)
	approved := identity.ApprovalCondition("Test", "ok")
	denied := identity.DenialCondition("Test", "no")
	failed := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue}
	notApproved := approved
	notApproved.Status = corev1.ConditionFalse
	cases := []struct {
		name       string
		other      bool
		conditions []certificatesv1.CertificateSigningRequestCondition
		cert       string
		wantCert   bool
		askAgain   bool
	}{
		{name: "pending"},
		{name: "approved, not yet issued", conditions: []certificatesv1.CertificateSigningRequestCondition{approved}},
		{name: "issued", conditions: []certificatesv1.CertificateSigningRequestCondition{approved}, cert: "x", wantCert: true},
		{name: "a condition that is not True counts for nothing", conditions: []certificatesv1.CertificateSigningRequestCondition{notApproved}, cert: "x"},
		{name: "denied", conditions: []certificatesv1.CertificateSigningRequestCondition{denied}, askAgain: true},
		{name: "approved, then signing failed", conditions: []certificatesv1.CertificateSigningRequestCondition{approved, failed}, askAgain: true},
		{name: "a request for another key under the name", other: true, conditions: []certificatesv1.CertificateSigningRequestCondition{approved}, cert: "x", askAgain: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reqKey := key
			if tc.other {
				reqKey = other
			}
			req := csrFor(t, "r", reqKey)
			req.Status.Conditions, req.Status.Certificate = tc.conditions, []byte(tc.cert)
			cert, err := issuedCertificate(req, fp)
			if (cert != nil) != tc.wantCert {
				t.Errorf("certificate = %q, want one: %v", cert, tc.wantCert)
			}
			if errors.Is(err, errAskAgain) != tc.askAgain || (err != nil && !tc.askAgain) {
				t.Errorf("error = %v, want errAskAgain: %v", err, tc.askAgain)
			}
		})
	}
}

func TestRequestJoinID(t *testing.T) {
	const current = "0123456789abcdef0123456789abcdef"
	certOf := func(orgs ...string) *x509.Certificate {
		return &x509.Certificate{Subject: pkix.Name{CommonName: identity.AgentUser("c1"), Organization: orgs}}
	}
	cases := []struct {
		name    string
		current *x509.Certificate
		want    string // empty: a fresh id
		wantErr bool
	}{
		{name: "a join gets a fresh id"},
		{name: "a rotation keeps its certificate's join", current: certOf(identity.MembersGroup, identity.ClusterGroup("c1"), identity.JoinGroup("c1", current)), want: current},
		{name: "a certificate of no join cannot rotate", current: certOf(identity.MembersGroup, identity.ClusterGroup("c1")), wantErr: true},
		{name: "a certificate of another cluster's join cannot rotate", current: certOf(identity.MembersGroup, identity.ClusterGroup("c1"), identity.JoinGroup("c2", current)), wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := requestJoinID("c1", tc.current)
			if (err != nil) != tc.wantErr {
				t.Fatalf("requestJoinID() error = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if tc.want != "" && got != tc.want {
				t.Errorf("requestJoinID() = %q, want %q", got, tc.want)
			}
			if !identity.ValidJoinID(got) {
				t.Errorf("requestJoinID() = %q, not a join id", got)
			}
			if again, _ := requestJoinID("c1", tc.current); tc.want == "" && again == got {
				t.Errorf("two joins got the same id %q", got)
			}
		})
	}
}

func TestRefusal(t *testing.T) {
	gr := schema.GroupResource{Group: "muster.dev", Resource: "memberclusters"}
	cases := []struct {
		name        string
		err         error
		wantRefused bool
		wantErr     bool
	}{
		{name: "the certificate reads its cluster"},
		{name: "revoked by a deny", err: apierrors.NewForbidden(gr, "c1", errors.New("no binding")), wantRefused: true},
		{name: "unknown to the hub", err: apierrors.NewUnauthorized("expired"), wantRefused: true},
		{name: "the cluster was unjoined", err: apierrors.NewNotFound(gr, "c1"), wantRefused: true},
		{name: "the hub is unreachable", err: errors.New("connection refused"), wantErr: true},
		{name: "the hub is overloaded", err: apierrors.NewTooManyRequests("later", 1), wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			refused, err := refusal("c1", tc.err)
			if refused != tc.wantRefused || (err != nil) != tc.wantErr {
				t.Errorf("refusal() = %v, %v; want refused %v, error %v", refused, err, tc.wantRefused, tc.wantErr)
			}
		})
	}
}
