// Package registration admits member clusters to the hub.
//
// The MemberCluster reconciler gives an accepted cluster its hub namespace
// (muster-member-<cluster>) and RBAC that lets only that cluster's agent identity
// (group muster:member:<cluster>) work in that namespace and read and report on its own
// MemberCluster; it removes the bindings again when the cluster is denied, so the old
// certificate is Forbidden everywhere. It owns the Accepted condition.
//
// The CSR approver signs nothing itself: it approves kube-apiserver-client requests for
// an agent identity when the cluster is accepted and the requester is that agent renewing
// its certificate, or, with the opt-in auto-accept policy, a bootstrap identity. Requests
// made with a bootstrap token otherwise wait for `musterctl accept`, which approves them
// with the same rules (see Decide).
package registration
