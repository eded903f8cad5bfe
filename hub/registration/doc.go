// Package registration admits member clusters to the hub.
//
// The MemberCluster reconciler gives an accepted cluster its hub namespace
// (muster-member-<cluster>) and RBAC that lets only the certificates of the cluster's
// current join (group muster:member:<cluster>:join:<id>, the id in the AgentJoinAnnotation)
// work in that namespace and read and report on its own MemberCluster. When the cluster is
// denied it removes the bindings and forgets the join, so every certificate issued so far
// is Forbidden everywhere, also after a re-accept: the agent joins again. For every
// MemberCluster it keeps a role that lets bootstrap tokens bound to that name read it. It
// owns the Accepted condition (and sets Joined=False on a deny).
//
// The CSR approver signs nothing itself: it approves kube-apiserver-client requests for
// an agent identity, for at most MaxCertificateLifetime, when the cluster is accepted and
// the requester is that agent renewing a certificate of the current join, or, with the
// opt-in auto-accept policy, a bootstrap identity. Requests made with a bootstrap token
// otherwise wait for `musterctl accept`, which approves them with the same rules (see
// Decide). Approving a join records its key and join id first.
package registration
