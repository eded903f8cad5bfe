package builders

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Keys, certificates and certificate signing requests for the agent's identity. This file
// does not import api/identity: that package's own in-package tests use these builders,
// and the import would be a cycle. Callers therefore bring the identity rules themselves:
// the PEM request from identity.NewAgentRequest (or a template of their own), a key's name
// from identity.KeyFingerprint(SPKI(key)).

// NewKey is a fresh P-256 key, the kind the agent makes. It panics on an error, which
// crypto/rand's reader does not return.
func NewKey() *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(fmt.Sprintf("generating a key: %v", err))
	}
	return key
}

// SPKI is key's public key as the SubjectPublicKeyInfo DER that identity.KeyFingerprint
// names.
func SPKI(key *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		panic(fmt.Sprintf("marshalling a P-256 public key: %v", err))
	}
	return der
}

// SelfSigned is a DER certificate for key named commonName, valid for an hour from now: a
// client certificate as far as the identity rules look at it (its key and its hash), which
// do not check who signed it.
func SelfSigned(key *ecdsa.PrivateKey, commonName string) []byte {
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		panic(fmt.Sprintf("drawing a serial number: %v", err))
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: commonName}, NotBefore: now, NotAfter: now.Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(fmt.Sprintf("self-signing a certificate: %v", err))
	}
	return der
}

// PEMCertificate is der as a PEM CERTIFICATE block, as the agent names its current
// certificate in a CSR's annotation.
func PEMCertificate(der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// PEMRequest is der as a PEM CERTIFICATE REQUEST block, a CSR's spec.request.
func PEMRequest(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// CSRBuilder builds a CertificateSigningRequest.
type CSRBuilder struct {
	csr certificatesv1.CertificateSigningRequest
}

// MakeCSR starts a request shaped as an agent's: for the API server's client signer, the
// client-auth and digital-signature usages, lasting an hour, generating its name from
// generateName. Its spec.request is empty until Request.
func MakeCSR(generateName string) *CSRBuilder {
	return &CSRBuilder{csr: certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: generateName},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName:        certificatesv1.KubeAPIServerClientSignerName,
			Usages:            []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature},
			ExpirationSeconds: ptr.To[int32](3600),
		},
	}}
}

// Obj returns a copy of the CSR built so far.
func (b *CSRBuilder) Obj() *certificatesv1.CertificateSigningRequest { return b.csr.DeepCopy() }

// Request sets the PEM PKCS#10 request.
func (b *CSRBuilder) Request(pemRequest []byte) *CSRBuilder {
	b.csr.Spec.Request = pemRequest
	return b
}

// Label sets one label.
func (b *CSRBuilder) Label(key, value string) *CSRBuilder {
	if b.csr.Labels == nil {
		b.csr.Labels = map[string]string{}
	}
	b.csr.Labels[key] = value
	return b
}

// Annotations sets the annotations, replacing any.
func (b *CSRBuilder) Annotations(annotations map[string]string) *CSRBuilder {
	b.csr.Annotations = annotations
	return b
}

// ExpirationSeconds sets the requested lifetime.
func (b *CSRBuilder) ExpirationSeconds(seconds int32) *CSRBuilder {
	b.csr.Spec.ExpirationSeconds = ptr.To(seconds)
	return b
}

// Requester sets who the API server recorded as making the request: what a CSR read back
// from it carries, and what a decision on a CSR built in memory looks at.
func (b *CSRBuilder) Requester(user string, groups ...string) *CSRBuilder {
	b.csr.Spec.Username, b.csr.Spec.Groups = user, groups
	return b
}
