package identity

import (
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// AcceptCluster marks mc accepted. A cluster that was not accepted loses its recorded join: its
// agent's certificates were revoked with the deny, and it joins again to get new ones.
func AcceptCluster(mc *musterv1.MemberCluster) {
	if !mc.Spec.Accepted {
		delete(mc.Annotations, AgentJoinAnnotation)
	}
	mc.Spec.Accepted = true
}

// DenyCluster marks mc not accepted and forgets its join, in the same write, so that no accept
// racing the hub's revocation can restore the old certificates' access.
func DenyCluster(mc *musterv1.MemberCluster) {
	delete(mc.Annotations, AgentJoinAnnotation)
	mc.Spec.Accepted = false
}

// Bind records the key and join id of req, about to be approved, as mc's agent key and
// current join, and says whether mc changed. Every approver writes it before the approval
// and under the optimistic lock, so two joins racing for an unbound cluster cannot both be
// approved (the loser sees the winner's key and is denied), and a join approved for a
// cluster that was denied meanwhile fails. The new join id moves the hub's RBAC to the new
// join's certificates.
func Bind(mc *musterv1.MemberCluster, req AgentRequest) bool {
	if mc.Annotations[AgentKeyAnnotation] == req.Key && mc.Annotations[AgentJoinAnnotation] == req.JoinID {
		return false
	}
	if mc.Annotations == nil {
		mc.Annotations = map[string]string{}
	}
	mc.Annotations[AgentKeyAnnotation] = req.Key
	mc.Annotations[AgentJoinAnnotation] = req.JoinID
	return true
}
