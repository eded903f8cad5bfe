package identity

import (
	"regexp"
	"strings"
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

// Identities of agents and of the bootstrap tokens they join with.
const (
	// BootstrapGroup is the extra group of Muster's bootstrap tokens.
	BootstrapGroup = "system:bootstrappers:muster"
)

// Annotations that bind a cluster's identity to one key.
const (
	// AgentKeyAnnotation on a MemberCluster is the fingerprint (KeyFingerprint) of the key
	// the hub last issued the cluster's agent certificate for. Only the hub and hub
	// administrators write it; the bootstrap policy forbids setting it on create.
	AgentKeyAnnotation = "muster.dev/agent-key"
	// AgentJoinAnnotation on a MemberCluster is the id of the agent's current join
	// (JoinGroup): the hub's RBAC admits that join's certificates only. An
	// approver records it with the key before approving a join; a deny removes it, so a
	// re-accepted cluster's agent must join again. Only the hub and hub administrators
	// write it; the bootstrap policy forbids setting it on create.
	AgentJoinAnnotation = "muster.dev/agent-join"
	// TokenClusterGroupPrefix, followed by a cluster name, is the extra group of a
	// bootstrap token that may join only that cluster (`musterctl token create --cluster`).
	TokenClusterGroupPrefix = BootstrapGroup + ":cluster:"
)

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
