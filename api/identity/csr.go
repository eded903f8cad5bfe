package identity

import (
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
)

var agentCommonName = regexp.MustCompile(`^muster:member:([a-z0-9]([-a-z0-9]*[a-z0-9])?):agent$`)

// allowedUsages are what an agent's client certificate may be used for.
var allowedUsages = []certificatesv1.KeyUsage{
	certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment,
}

// AgentRequest is what an agent certificate request asks for.
type AgentRequest struct {
	// Cluster whose agent identity is asked for.
	Cluster string
	// JoinID is the id of the join the certificate belongs to (JoinGroup).
	JoinID string
	// Key is the fingerprint of the key the certificate is asked for.
	Key string
}

// ParseAgentCSR checks that csr asks for exactly an agent identity and nothing more: the
// agent's user, groups muster:members, muster:member:<cluster> and one join group, no
// other subject alternative, client usages only.
func ParseAgentCSR(csr *certificatesv1.CertificateSigningRequest) (AgentRequest, error) {
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return AgentRequest{}, fmt.Errorf("signer %q is not %s", csr.Spec.SignerName, certificatesv1.KubeAPIServerClientSignerName)
	}
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return AgentRequest{}, errors.New("request is not a PEM certificate request")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return AgentRequest{}, fmt.Errorf("parsing certificate request: %w", err)
	}
	if err := req.CheckSignature(); err != nil {
		return AgentRequest{}, fmt.Errorf("certificate request signature: %w", err)
	}
	m := agentCommonName.FindStringSubmatch(req.Subject.CommonName)
	if m == nil {
		return AgentRequest{}, fmt.Errorf("common name %q is not an agent identity", req.Subject.CommonName)
	}
	cluster := m[1]
	joinID, err := agentGroups(cluster, req.Subject.Organization)
	if err != nil {
		return AgentRequest{}, err
	}
	if len(req.DNSNames)+len(req.IPAddresses)+len(req.EmailAddresses)+len(req.URIs) > 0 {
		return AgentRequest{}, errors.New("an agent client certificate carries no subject alternative names")
	}
	if err := checkUsages(csr.Spec.Usages); err != nil {
		return AgentRequest{}, err
	}
	return AgentRequest{Cluster: cluster, JoinID: joinID, Key: KeyFingerprint(req.RawSubjectPublicKeyInfo)}, nil
}

// agentGroups checks that orgs are exactly the groups of one join of cluster's agent, and
// returns the join's id.
func agentGroups(cluster string, orgs []string) (string, error) {
	joinID, ok := JoinIDOf(cluster, orgs)
	if !ok {
		return "", fmt.Errorf("organizations %v name no single join group %s", orgs, JoinGroup(cluster, "<32 hex digits>"))
	}
	got := slices.Clone(orgs)
	slices.Sort(got)
	want := []string{ClusterGroup(cluster), JoinGroup(cluster, joinID), MembersGroup}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return "", fmt.Errorf("organizations %v, want exactly %v", orgs, want)
	}
	return joinID, nil
}

func checkUsages(usages []certificatesv1.KeyUsage) error {
	if !slices.Contains(usages, certificatesv1.UsageClientAuth) {
		return errors.New("usages lack client auth")
	}
	for _, u := range usages {
		if !slices.Contains(allowedUsages, u) {
			return fmt.Errorf("usage %q is not allowed for an agent", u)
		}
	}
	return nil
}

// KeyFingerprint names a public key by the SHA-256 of its SubjectPublicKeyInfo.
func KeyFingerprint(spki []byte) string {
	sum := sha256.Sum256(spki)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// RequestKey is the fingerprint of the key a CSR asks a certificate for.
func RequestKey(csr *certificatesv1.CertificateSigningRequest) (string, error) {
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil {
		return "", errors.New("request is not PEM")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("parsing certificate request: %w", err)
	}
	return KeyFingerprint(req.RawSubjectPublicKeyInfo), nil
}

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
	block, _ := pem.Decode([]byte(csr.Annotations[CurrentCertificateAnnotation]))
	if block == nil || block.Type != "CERTIFICATE" {
		return "", fmt.Errorf("annotation %s holds no PEM certificate", CurrentCertificateAnnotation)
	}
	if sum := sha256.Sum256(block.Bytes); hex.EncodeToString(sum[:]) != seen {
		return "", fmt.Errorf("annotation %s is not the certificate the requester authenticated with", CurrentCertificateAnnotation)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("parsing the requester's certificate: %w", err)
	}
	return KeyFingerprint(cert.RawSubjectPublicKeyInfo), nil
}

// NewAgentRequest is the PEM PKCS#10 request an agent makes for its identity in join
// joinID of cluster, for key: exactly the subject ParseAgentCSR accepts, and nothing more.
func NewAgentRequest(cluster, joinID string, key crypto.Signer) ([]byte, error) {
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{
		CommonName:   AgentUser(cluster),
		Organization: []string{MembersGroup, ClusterGroup(cluster), JoinGroup(cluster, joinID)},
	}}, key)
	if err != nil {
		return nil, fmt.Errorf("creating the certificate request: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), nil
}
