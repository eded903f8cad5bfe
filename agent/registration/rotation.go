package registration

import (
	"crypto/x509"
	"time"
)

// RenewAtRemaining is the share of a certificate's lifetime left when it is renewed.
const RenewAtRemaining = 0.2

// RotationDeadline is when cert is due for renewal: once 20% of its lifetime remains.
func RotationDeadline(cert *x509.Certificate) time.Time {
	lifetime := cert.NotAfter.Sub(cert.NotBefore)
	return cert.NotAfter.Add(-time.Duration(float64(lifetime) * RenewAtRemaining))
}

// usable says whether a stored certificate can still be used at now: not expired and
// not yet due for renewal. A due certificate is renewed before the agent relies on it.
func usable(cert *x509.Certificate, now time.Time) bool {
	return now.After(cert.NotBefore) && now.Before(RotationDeadline(cert))
}
