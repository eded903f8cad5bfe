package registration

import (
	"crypto/x509"
	"time"
)

// RenewAtRemaining is the share of a certificate's lifetime left when it is renewed.
const RenewAtRemaining = 0.2

// RotationDeadline is when cert is due for renewal: once 20% of its lifetime remains.
// The lifetime counts from issuedAt, when the agent received the certificate, because
// signers backdate NotBefore (kube-controller-manager by five minutes): counted from
// NotBefore, a certificate issued for less than the backdate would be due at once, and the
// agent would renew in a loop. A zero issuedAt falls back to NotBefore.
func RotationDeadline(cert *x509.Certificate, issuedAt time.Time) time.Time {
	start := cert.NotBefore
	if issuedAt.After(start) && issuedAt.Before(cert.NotAfter) {
		start = issuedAt
	}
	lifetime := cert.NotAfter.Sub(start)
	return cert.NotAfter.Add(-time.Duration(float64(lifetime) * RenewAtRemaining))
}

// usable says whether a stored certificate can still authenticate the agent at now. One
// due for renewal is usable: renewing it needs the identity it carries.
func usable(cert *x509.Certificate, now time.Time) bool {
	return now.After(cert.NotBefore) && now.Before(cert.NotAfter)
}
