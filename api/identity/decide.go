package identity

import (
	"fmt"
	"slices"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

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
	case csr.Spec.Username == AgentUser(cluster) && slices.Contains(csr.Spec.Groups, ClusterGroup(cluster)):
		return RequesterAgent
	case slices.Contains(csr.Spec.Groups, BootstrapGroup):
		return RequesterBootstrap
	default:
		return RequesterOther
	}
}

// DefaultMaxCertificateLifetime is the longest agent certificate the hub approves unless
// configured otherwise: a day, renewed after 19h12m. A certificate cannot be revoked, so
// its lifetime bounds how long a stolen one is worth anything outside Muster's RBAC.
const DefaultMaxCertificateLifetime = 24 * time.Hour

// Facts are what the policy needs to know beyond the request itself.
type Facts struct {
	// Accepted: the cluster exists, is accepted and is not being deleted.
	Accepted bool
	// BoundKey is the fingerprint recorded in the cluster's AgentKeyAnnotation, empty
	// while no agent has joined.
	BoundKey string
	// JoinID is the id recorded in the cluster's AgentJoinAnnotation: the join whose
	// certificates the hub's RBAC admits. Empty before the first join and after a deny.
	JoinID string
	// AutoAccept is the hub's opt-in policy; ByAdmin is `musterctl accept`.
	AutoAccept, ByAdmin bool
	// Rekey is `musterctl accept --rekey`: the administrator means to replace the bound key.
	Rekey bool
	// MaxLifetime is the longest certificate approved (zero: DefaultMaxCertificateLifetime).
	MaxLifetime time.Duration
}

// Verdict is a decision on a request, with the reason a denial records and why.
type Verdict struct {
	Decision Decision
	// Reason is the CSR condition and event reason of a denial.
	Reason string
	Why    string
}

func verdict(d Decision, why string) Verdict { return Verdict{Decision: d, Why: why} }

func denial(reason, why string) Verdict {
	return Verdict{Decision: Deny, Reason: reason, Why: why}
}

// Decide is the approval policy shared by the hub's approver and `musterctl accept`.
//
// A cluster's identity belongs to the key of its first approved join: after that only the
// holder of a certificate for that key (rotation) or an administrator's explicit rekey
// moves it to another key. A request for the bound key itself is never denied for its
// key: a certificate is worthless without its private key.
//
// Each join carries a new join id, which the approver records and the hub's RBAC names; a
// rotation keeps the id of the certificate it renews and must be the current join's. So a
// certificate of an earlier join never works again, even for the same key.
//
// Every certificate Muster approves lasts at most f.MaxLifetime.
func Decide(csr *certificatesv1.CertificateSigningRequest, f Facts) Verdict {
	if decided(csr) {
		return verdict(Ignore, "already decided")
	}
	req, err := ParseAgentCSR(csr)
	if err != nil {
		return verdict(Ignore, err.Error())
	}
	requester := RequesterOf(csr, req.Cluster)
	if requester == RequesterOther {
		if slices.Contains(csr.Spec.Groups, MembersGroup) {
			return denial(musterv1.ReasonAgentKeyMismatch, fmt.Sprintf("requester %s is another cluster's agent", csr.Spec.Username))
		}
		return verdict(Ignore, fmt.Sprintf("requester %s is neither a bootstrap token nor cluster %s's agent", csr.Spec.Username, req.Cluster))
	}
	if why, ok := lifetimeAllowed(csr, f.MaxLifetime); !ok {
		return denial(musterv1.ReasonCertificateLifetime, why)
	}
	if requester == RequesterAgent {
		return decideRotation(csr, req, f)
	}
	return decideJoin(csr, req, f)
}

// lifetimeAllowed says whether csr asks for a lifetime of at most max (zero: the default).
// A request that asks for none would get the signer's maximum, a year by default.
func lifetimeAllowed(csr *certificatesv1.CertificateSigningRequest, max time.Duration) (string, bool) {
	if max <= 0 {
		max = DefaultMaxCertificateLifetime
	}
	if csr.Spec.ExpirationSeconds == nil {
		return fmt.Sprintf("the request sets no spec.expirationSeconds, so the signer's maximum would apply; the hub approves agent certificates of at most %s (the agent's --cert-lifetime)", max), false
	}
	asked := time.Duration(*csr.Spec.ExpirationSeconds) * time.Second
	if asked > max {
		return fmt.Sprintf("the request asks for a certificate of %s; the hub approves agent certificates of at most %s (lower the agent's --cert-lifetime, or raise the hub's --max-agent-certificate-lifetime)", asked, max), false
	}
	return "", true
}

// decideRotation decides a request made by the cluster's agent with its certificate.
func decideRotation(csr *certificatesv1.CertificateSigningRequest, req AgentRequest, f Facts) Verdict {
	cluster := req.Cluster
	if !f.Accepted {
		// Rotations come from certificates, and a cluster that is not accepted has had its
		// join revoked: renewing one would outlive the deny.
		return denial(musterv1.ReasonAgentJoinMismatch, fmt.Sprintf("cluster %s is not accepted: a certificate from before a deny is never renewed", cluster))
	}
	holder, _ := JoinIDOf(cluster, csr.Spec.Groups)
	if f.JoinID == "" || req.JoinID != f.JoinID || holder != f.JoinID {
		return denial(musterv1.ReasonAgentJoinMismatch, fmt.Sprintf("the request renews join %q with a certificate of join %q, but cluster %s's current join is %q (a certificate from before a deny, unjoin, rekey or re-join)", req.JoinID, holder, cluster, f.JoinID))
	}
	if req.Key == f.BoundKey {
		// An approver (the hub's or `musterctl accept`) binds a request's key before
		// approving it, so this is a rotation another approver is halfway through; its
		// certificate is usable only by the bound key's holder. Denying it would leave
		// the cluster bound to a key its agent never gets a certificate for.
		return verdict(Approve, "a certificate for the cluster's bound key")
	}
	holderKey, err := RequesterKey(csr)
	if err != nil {
		return denial(musterv1.ReasonAgentKeyMismatch, fmt.Sprintf("a rotation must be authenticated by the agent's current certificate: %v", err))
	}
	if f.BoundKey == "" || holderKey != f.BoundKey {
		return denial(musterv1.ReasonAgentKeyMismatch, fmt.Sprintf("the requester's certificate has key %s, but cluster %s is bound to key %q (a certificate from before a re-join or rekey)", holderKey, cluster, f.BoundKey))
	}
	return verdict(Approve, "rotation by the holder of the cluster's current certificate")
}

// decideJoin decides a request made with a bootstrap token.
func decideJoin(csr *certificatesv1.CertificateSigningRequest, req AgentRequest, f Facts) Verdict {
	cluster := req.Cluster
	if only, ok := TokenCluster(csr.Spec.Groups); ok && only != cluster {
		return denial(musterv1.ReasonAgentKeyMismatch, fmt.Sprintf("the bootstrap token is bound to cluster %s, not %s", only, cluster))
	}
	rekey := f.ByAdmin && f.Rekey
	if f.BoundKey != "" && req.Key != f.BoundKey && !rekey {
		return denial(musterv1.ReasonAgentKeyMismatch, fmt.Sprintf("cluster %s already joined with key %s; this request's key %s is not it (an administrator replacing a lost key runs `musterctl accept --rekey %s`)", cluster, f.BoundKey, req.Key, cluster))
	}
	if f.JoinID != "" && req.JoinID == f.JoinID && req.Key != f.BoundKey {
		// The current join's id with another key: approving it would hand the current
		// join's RBAC to a second key. A join that an approver has recorded but not yet
		// approved has the bound key, and goes on below.
		return denial(musterv1.ReasonAgentJoinMismatch, fmt.Sprintf("a join must carry a new join id; %q is cluster %s's current join", req.JoinID, cluster))
	}
	if !f.Accepted {
		return verdict(Wait, fmt.Sprintf("cluster %s is not accepted", cluster))
	}
	if rekey && req.Key != f.BoundKey {
		return verdict(Approve, "the administrator replaced the cluster's key")
	}
	if f.ByAdmin || f.AutoAccept {
		return verdict(Approve, "join with a bootstrap token of an accepted cluster")
	}
	return verdict(Wait, "a join waits for `musterctl accept "+cluster+"`")
}

func decided(csr *certificatesv1.CertificateSigningRequest) bool {
	for _, c := range csr.Status.Conditions {
		if (c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
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
