package registration

import (
	"crypto/x509"
	"errors"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestIssuedCertificate(t *testing.T) {
	key, other := newKey(t), newKey(t)
	spki, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	fp := musterv1.KeyFingerprint(spki)
	approved := musterv1.ApprovalCondition("Test", "ok")
	denied := musterv1.DenialCondition("Test", "no")
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
