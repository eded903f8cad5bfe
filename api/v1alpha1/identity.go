package v1alpha1

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"regexp"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
)

// Identities of agents on the hub: the hub's approver grants them, the agents ask for
// them, and musterctl lists the requests. CSRs name their cluster with ClusterNameLabel,
// for listing only; the approver trusts only the request's subject.
const (
	// MembersGroup holds every agent.
	MembersGroup = "muster:members"
	// CurrentCertificateAnnotation on a rotation CSR carries the PEM certificate the agent
	// authenticated with. It is public; the hub trusts it only when its hash is the
	// credential the API server saw.
	CurrentCertificateAnnotation = "muster.dev/current-certificate"
)

// AgentUser is the user name of a cluster's agent certificate.
func AgentUser(cluster string) string { return "muster:member:" + cluster + ":agent" }

// ClusterGroup is the group that every credential of one cluster's agent carries. The
// hub grants it nothing: its RBAC names the JoinGroup of the cluster's current join.
func ClusterGroup(cluster string) string { return "muster:member:" + cluster }

// JoinGroup is the group of the certificates of one join of a cluster's agent: the join's
// id, chosen afresh by the agent for each join and kept by its rotations. The hub binds
// its RBAC to the group of the cluster's current join only, so a certificate of an earlier
// join (before a deny, unjoin, rekey or re-join) reaches nothing, whatever its lifetime.
func JoinGroup(cluster, joinID string) string { return ClusterGroup(cluster) + ":join:" + joinID }

// joinIDPattern is a join id: 128 random bits in lowercase hex.
var joinIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// ValidJoinID says whether id has the form of a join id.
func ValidJoinID(id string) bool { return joinIDPattern.MatchString(id) }

// JoinIDOf returns the join id of the one JoinGroup of cluster among groups; ok is false
// when there is none or more than one.
func JoinIDOf(cluster string, groups []string) (id string, ok bool) {
	prefix := JoinGroup(cluster, "")
	for _, g := range groups {
		rest, found := strings.CutPrefix(g, prefix)
		if !found {
			continue
		}
		if ok || !ValidJoinID(rest) {
			return "", false
		}
		id, ok = rest, true
	}
	return id, ok
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

// ApprovalCondition is the condition an approval adds to a CSR.
func ApprovalCondition(reason, message string) certificatesv1.CertificateSigningRequestCondition {
	return certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: reason, Message: message,
	}
}

// DenialCondition is the condition a denial adds to a CSR.
func DenialCondition(reason, message string) certificatesv1.CertificateSigningRequestCondition {
	return certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, Reason: reason, Message: message,
	}
}
