package registration

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"regexp"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Identities of agents and of the bootstrap tokens they join with.
const (
	// BootstrapGroup is the extra group of Muster's bootstrap tokens.
	BootstrapGroup = "system:bootstrappers:muster"
)

var agentCommonName = regexp.MustCompile(`^muster:member:([a-z0-9]([-a-z0-9]*[a-z0-9])?):agent$`)

// allowedUsages are what an agent's client certificate may be used for.
var allowedUsages = []certificatesv1.KeyUsage{
	certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment,
}

// ParseAgentCSR checks that csr asks for exactly an agent identity and nothing more, and
// returns the cluster it is for.
func ParseAgentCSR(csr *certificatesv1.CertificateSigningRequest) (string, error) {
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return "", fmt.Errorf("signer %q is not %s", csr.Spec.SignerName, certificatesv1.KubeAPIServerClientSignerName)
	}
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return "", errors.New("request is not a PEM certificate request")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("parsing certificate request: %w", err)
	}
	if err := req.CheckSignature(); err != nil {
		return "", fmt.Errorf("certificate request signature: %w", err)
	}
	m := agentCommonName.FindStringSubmatch(req.Subject.CommonName)
	if m == nil {
		return "", fmt.Errorf("common name %q is not an agent identity", req.Subject.CommonName)
	}
	cluster := m[1]
	orgs := slices.Clone(req.Subject.Organization)
	slices.Sort(orgs)
	if want := []string{musterv1.ClusterGroup(cluster), musterv1.MembersGroup}; !slices.Equal(orgs, want) {
		return "", fmt.Errorf("organizations %v, want exactly %v", req.Subject.Organization, want)
	}
	if len(req.DNSNames)+len(req.IPAddresses)+len(req.EmailAddresses)+len(req.URIs) > 0 {
		return "", errors.New("an agent client certificate carries no subject alternative names")
	}
	if !slices.Contains(csr.Spec.Usages, certificatesv1.UsageClientAuth) {
		return "", errors.New("usages lack client auth")
	}
	for _, u := range csr.Spec.Usages {
		if !slices.Contains(allowedUsages, u) {
			return "", fmt.Errorf("usage %q is not allowed for an agent", u)
		}
	}
	return cluster, nil
}

// Decision is what to do with a pending CSR.
type Decision string

const (
	// Ignore: not an agent request, or already decided.
	Ignore Decision = "Ignore"
	// Approve the request, binding the cluster to the request's key first.
	Approve Decision = "Approve"
	// Wait for the cluster to be accepted, or for an administrator.
	Wait Decision = "Wait"
	// Deny the request: it asks for an identity its requester may not have.
	Deny Decision = "Deny"
)

// Requester classifies who made a CSR for cluster.
type Requester string

const (
	RequesterBootstrap Requester = "Bootstrap"
	RequesterAgent     Requester = "Agent"
	RequesterOther     Requester = "Other"
)

// RequesterOf says whether the CSR came from a Muster bootstrap token or from cluster's own
// agent renewing its certificate.
func RequesterOf(csr *certificatesv1.CertificateSigningRequest, cluster string) Requester {
	switch {
	case csr.Spec.Username == musterv1.AgentUser(cluster) && slices.Contains(csr.Spec.Groups, musterv1.ClusterGroup(cluster)):
		return RequesterAgent
	case slices.Contains(csr.Spec.Groups, BootstrapGroup):
		return RequesterBootstrap
	default:
		return RequesterOther
	}
}

// Facts are what the policy needs to know beyond the request itself.
type Facts struct {
	// Accepted: the cluster exists, is accepted and is not being deleted.
	Accepted bool
	// BoundKey is the fingerprint recorded in the cluster's AgentKeyAnnotation, empty
	// while no agent has joined.
	BoundKey string
	// AutoAccept is the hub's opt-in policy; ByAdmin is `musterctl accept`.
	AutoAccept, ByAdmin bool
	// Rekey is `musterctl accept --rekey`: the administrator means to replace the bound key.
	Rekey bool
}

// Decide is the approval policy shared by the hub's approver and `musterctl accept`. A
// cluster's identity belongs to the key of its first approved join; after that only the
// holder of a certificate for that key (rotation) or an administrator's explicit rekey
// moves it to another key. Everything else asking for a bound identity with another key is
// denied, so no later `accept` can approve it by mistake. A request for the bound key
// itself is never denied: a certificate is worthless without its private key.
func Decide(csr *certificatesv1.CertificateSigningRequest, f Facts) (Decision, string) {
	if decided(csr) {
		return Ignore, "already decided"
	}
	cluster, err := ParseAgentCSR(csr)
	if err != nil {
		return Ignore, err.Error()
	}
	key, err := musterv1.RequestKey(csr)
	if err != nil {
		return Ignore, err.Error()
	}
	switch RequesterOf(csr, cluster) {
	case RequesterAgent:
		if !f.Accepted {
			return Wait, fmt.Sprintf("cluster %s is not accepted", cluster)
		}
		if key == f.BoundKey {
			// An approver (the hub's or `musterctl accept`) binds a request's key before
			// approving it, so this is a rotation another approver is halfway through; its
			// certificate is usable only by the bound key's holder. Denying it would leave
			// the cluster bound to a key its agent never gets a certificate for.
			return Approve, "a certificate for the cluster's bound key"
		}
		holder, err := RequesterKey(csr)
		if err != nil {
			return Deny, fmt.Sprintf("a rotation must be authenticated by the agent's current certificate: %v", err)
		}
		if f.BoundKey == "" || holder != f.BoundKey {
			return Deny, fmt.Sprintf("the requester's certificate has key %s, but cluster %s is bound to key %q (a certificate from before a re-join or rekey)", holder, cluster, f.BoundKey)
		}
		return Approve, "rotation by the holder of the cluster's current certificate"
	case RequesterBootstrap:
		if only, ok := TokenCluster(csr.Spec.Groups); ok && only != cluster {
			return Deny, fmt.Sprintf("the bootstrap token is bound to cluster %s, not %s", only, cluster)
		}
		rekey := f.ByAdmin && f.Rekey
		if f.BoundKey != "" && key != f.BoundKey && !rekey {
			return Deny, fmt.Sprintf("cluster %s already joined with key %s; this request's key %s is not it (an administrator replacing a lost key runs `musterctl accept --rekey %s`)", cluster, f.BoundKey, key, cluster)
		}
		if !f.Accepted {
			return Wait, fmt.Sprintf("cluster %s is not accepted", cluster)
		}
		if rekey && key != f.BoundKey {
			return Approve, "the administrator replaced the cluster's key"
		}
		if f.ByAdmin || f.AutoAccept {
			return Approve, "join with a bootstrap token of an accepted cluster"
		}
		return Wait, "a join waits for `musterctl accept " + cluster + "`"
	default:
		if slices.Contains(csr.Spec.Groups, musterv1.MembersGroup) {
			return Deny, fmt.Sprintf("requester %s is another cluster's agent", csr.Spec.Username)
		}
		return Ignore, fmt.Sprintf("requester %s is neither a bootstrap token nor cluster %s's agent", csr.Spec.Username, cluster)
	}
}

func decided(csr *certificatesv1.CertificateSigningRequest) bool {
	for _, c := range csr.Status.Conditions {
		if (c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
