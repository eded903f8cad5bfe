package registration

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Annotations that bind a cluster's identity to one key.
const (
	// AgentKeyAnnotation on a MemberCluster is the fingerprint (musterv1.KeyFingerprint) of the key
	// the hub last issued the cluster's agent certificate for. Only the hub and hub
	// administrators write it; the bootstrap policy forbids setting it on create.
	AgentKeyAnnotation = "muster.dev/agent-key"
	// AgentJoinAnnotation on a MemberCluster is the id of the agent's current join
	// (musterv1.JoinGroup): the hub's RBAC admits that join's certificates only. An
	// approver records it with the key before approving a join; a deny removes it, so a
	// re-accepted cluster's agent must join again. Only the hub and hub administrators
	// write it; the bootstrap policy forbids setting it on create.
	AgentJoinAnnotation = "muster.dev/agent-join"
	// TokenClusterGroupPrefix, followed by a cluster name, is the extra group of a
	// bootstrap token that may join only that cluster (`musterctl token create --cluster`).
	TokenClusterGroupPrefix = BootstrapGroup + ":cluster:"
)

// credentialIDExtra is the user extra in which the API server names the credential a
// request was authenticated with; for a client certificate "X509SHA256=<hex of its DER>".
const credentialIDExtra = "authentication.kubernetes.io/credential-id"

// RequesterKey is the fingerprint of the key of the client certificate the CSR's requester
// authenticated with. The certificate itself comes from the CSR's annotation, which anyone
// may write, so it counts only if its hash is the credential the API server recorded.
func RequesterKey(csr *certificatesv1.CertificateSigningRequest) (string, error) {
	var seen string
	for _, id := range csr.Spec.Extra[credentialIDExtra] {
		if h, ok := strings.CutPrefix(id, "X509SHA256="); ok {
			seen = h
		}
	}
	if seen == "" {
		return "", errors.New("the API server recorded no client certificate for the requester")
	}
	block, _ := pem.Decode([]byte(csr.Annotations[musterv1.CurrentCertificateAnnotation]))
	if block == nil || block.Type != "CERTIFICATE" {
		return "", fmt.Errorf("annotation %s holds no PEM certificate", musterv1.CurrentCertificateAnnotation)
	}
	if sum := sha256.Sum256(block.Bytes); hex.EncodeToString(sum[:]) != seen {
		return "", fmt.Errorf("annotation %s is not the certificate the requester authenticated with", musterv1.CurrentCertificateAnnotation)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("parsing the requester's certificate: %w", err)
	}
	return musterv1.KeyFingerprint(cert.RawSubjectPublicKeyInfo), nil
}

// TokenCluster returns the one cluster a bootstrap token with these groups may join, if
// it is bound to one.
func TokenCluster(groups []string) (string, bool) {
	for _, g := range groups {
		if name, ok := strings.CutPrefix(g, TokenClusterGroupPrefix); ok {
			return name, true
		}
	}
	return "", false
}
