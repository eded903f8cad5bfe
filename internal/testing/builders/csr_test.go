package builders_test

import (
	"crypto/x509"
	"encoding/pem"
	"testing"

	"github.com/musterhq/muster/api/identity"
	"github.com/musterhq/muster/internal/testing/builders"
)

// A built agent CSR is one the API server stores, asks for the key it was made with (as
// SPKI names it), and passes the identity rules' own parsing; a self-signed certificate
// names the same key.
func TestAgentCSRIsStoredAndNamesItsKey(t *testing.T) {
	key := builders.NewKey()
	request, err := identity.NewAgentRequest("c1", "0123456789abcdef0123456789abcdef", key)
	if err != nil {
		t.Fatal(err)
	}
	csr := builders.MakeCSR("agent-").Label("cluster", "c1").Request(request).Obj()
	if got, err := identity.RequestKey(csr); err != nil || got != identity.KeyFingerprint(builders.SPKI(key)) {
		t.Errorf("RequestKey() = %q, %v, want the fingerprint of the key it was made with", got, err)
	}
	create(t, csr)

	block, _ := pem.Decode([]byte(builders.PEMCertificate(builders.SelfSigned(key, "agent"))))
	if block == nil {
		t.Fatal("PEMCertificate is not PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if identity.KeyFingerprint(cert.RawSubjectPublicKeyInfo) != identity.KeyFingerprint(builders.SPKI(key)) || cert.Subject.CommonName != "agent" {
		t.Errorf("self-signed certificate for %s, key %s: not the key and name asked for", cert.Subject.CommonName, identity.KeyFingerprint(cert.RawSubjectPublicKeyInfo))
	}
}
