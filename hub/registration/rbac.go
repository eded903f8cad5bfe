package registration

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// agentRoleName names the namespaced Role and RoleBinding in a member namespace.
const agentRoleName = "muster:agent"

// ClusterRoleName names the ClusterRole and ClusterRoleBinding of one cluster's agent.
func ClusterRoleName(cluster string) string { return "muster:member:" + cluster }

// agentNamespacePolicy is what an agent may do in its own hub namespace: take Works and
// report on them, publish its node inventory and heartbeat, and record events.
func agentNamespacePolicy() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{musterv1.GroupVersion.Group}, Resources: []string{"works"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
		{APIGroups: []string{musterv1.GroupVersion.Group}, Resources: []string{"works/status"}, Verbs: []string{"get", "update", "patch"}},
		{APIGroups: []string{musterv1.GroupVersion.Group}, Resources: []string{"nodeslices"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch"}},
		{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "update", "patch"}},
	}
}

// agentClusterPolicy is what an agent may do outside its namespace: read and report on
// its own MemberCluster only, and renew its certificate. CSRs are create and get only: RBAC
// cannot scope a list or watch to one cluster's requests (their names are not known in
// advance), and a list would show every cluster's. The agent reads its own request by
// its name, 128 random bits that no other cluster can guess.
func agentClusterPolicy(cluster string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{musterv1.GroupVersion.Group}, Resources: []string{"memberclusters"}, ResourceNames: []string{cluster}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{musterv1.GroupVersion.Group}, Resources: []string{"memberclusters/status"}, ResourceNames: []string{cluster}, Verbs: []string{"get", "update", "patch"}},
		{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create", "get"}},
	}
}

// desiredRBAC returns the namespace and RBAC objects an accepted cluster needs, each
// owned by its MemberCluster so that deleting the cluster deletes them.
func desiredRBAC(mc *musterv1.MemberCluster) (*corev1.Namespace, []rbacObject) {
	owner := []metav1.OwnerReference{*metav1.NewControllerRef(mc, musterv1.GroupVersion.WithKind("MemberCluster"))}
	ns := musterv1.MemberNamespace(mc.Name)
	labels := map[string]string{musterv1.ClusterNameLabel: mc.Name}
	subjects := []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: musterv1.ClusterGroup(mc.Name)}}
	meta := func(namespace, name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels, OwnerReferences: owner}
	}
	namespace := &corev1.Namespace{ObjectMeta: meta("", ns)}
	return namespace, []rbacObject{
		&rbacv1.Role{ObjectMeta: meta(ns, agentRoleName), Rules: agentNamespacePolicy()},
		&rbacv1.RoleBinding{ObjectMeta: meta(ns, agentRoleName), Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: agentRoleName}},
		&rbacv1.ClusterRole{ObjectMeta: meta("", ClusterRoleName(mc.Name)), Rules: agentClusterPolicy(mc.Name)},
		&rbacv1.ClusterRoleBinding{ObjectMeta: meta("", ClusterRoleName(mc.Name)), Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ClusterRoleName(mc.Name)}},
	}
}

// bindings returns the (empty) binding objects that grant a cluster's agent anything;
// deleting them revokes every permission of its certificate.
func bindings(cluster string) []rbacObject {
	return []rbacObject{
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: musterv1.MemberNamespace(cluster), Name: agentRoleName}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ClusterRoleName(cluster)}},
	}
}
