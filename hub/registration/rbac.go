package registration

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/musterhq/muster/api/identity"
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
// owned by its MemberCluster so that deleting the cluster deletes them: the roles, and the
// bindings that grant them to the group of the cluster's current join. Without a
// recorded join (before the first, or after a deny) there are no bindings: a certificate
// of an earlier join carries another join group, and reaches nothing.
func desiredRBAC(mc *musterv1.MemberCluster) (ns *corev1.Namespace, roles, binds []rbacObject) {
	namespace := musterv1.MemberNamespace(mc.Name)
	meta := ownedMeta(mc)
	roles = []rbacObject{
		&rbacv1.Role{ObjectMeta: meta(namespace, agentRoleName), Rules: agentNamespacePolicy()},
		&rbacv1.ClusterRole{ObjectMeta: meta("", ClusterRoleName(mc.Name)), Rules: agentClusterPolicy(mc.Name)},
	}
	joinID := currentJoin(mc)
	if joinID == "" {
		return &corev1.Namespace{ObjectMeta: meta("", namespace)}, roles, nil
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: identity.JoinGroup(mc.Name, joinID)}}
	binds = []rbacObject{
		&rbacv1.RoleBinding{ObjectMeta: meta(namespace, agentRoleName), Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: agentRoleName}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: meta("", ClusterRoleName(mc.Name)), Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ClusterRoleName(mc.Name)}},
	}
	return &corev1.Namespace{ObjectMeta: meta("", namespace)}, roles, binds
}

// currentJoin is the join id recorded on mc, or empty when none (or a malformed one) is.
func currentJoin(mc *musterv1.MemberCluster) string {
	if id := mc.Annotations[identity.AgentJoinAnnotation]; identity.ValidJoinID(id) {
		return id
	}
	return ""
}

// ownedMeta makes the metadata of an object owned by mc and labelled with its name.
func ownedMeta(mc *musterv1.MemberCluster) func(namespace, name string) metav1.ObjectMeta {
	owner := []metav1.OwnerReference{*metav1.NewControllerRef(mc, musterv1.GroupVersion.WithKind("MemberCluster"))}
	labels := map[string]string{musterv1.ClusterNameLabel: mc.Name}
	return func(namespace, name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels, OwnerReferences: owner}
	}
}

// BootstrapReaderName names the ClusterRole and ClusterRoleBinding that let the bootstrap
// tokens bound to one cluster read that cluster's MemberCluster.
func BootstrapReaderName(cluster string) string { return "muster:bootstrap:cluster:" + cluster }

// bootstrapReader lets a token made by `musterctl token create --cluster c` get
// MemberCluster c, and no other: a re-join checks that the registered cluster is its own.
// A token bound to no cluster reads no MemberCluster at all (see deploy/charts/muster-hub/templates/install.yaml).
func bootstrapReader(mc *musterv1.MemberCluster) []rbacObject {
	name, meta := BootstrapReaderName(mc.Name), ownedMeta(mc)
	return []rbacObject{
		&rbacv1.ClusterRole{ObjectMeta: meta("", name), Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{musterv1.GroupVersion.Group}, Resources: []string{"memberclusters"}, ResourceNames: []string{mc.Name}, Verbs: []string{"get"}},
		}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: meta("", name),
			Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: identity.TokenClusterGroupPrefix + mc.Name}},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}},
	}
}

// bindings returns the (empty) binding objects that grant a cluster's agent anything;
// deleting them revokes every permission of its certificates.
func bindings(cluster string) []rbacObject {
	return []rbacObject{
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: musterv1.MemberNamespace(cluster), Name: agentRoleName}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ClusterRoleName(cluster)}},
	}
}
