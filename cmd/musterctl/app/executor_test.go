package app

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// joined returns the object of that kind, namespace and name among what join installs.
func installed[T any](t *testing.T, objs []*unstructured.Unstructured, kind, namespace, name string) *T {
	t.Helper()
	for _, u := range objs {
		if u.GetKind() == kind && u.GetNamespace() == namespace && u.GetName() == name {
			var out T
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &out); err != nil {
				t.Fatal(err)
			}
			return &out
		}
	}
	t.Fatalf("join installs no %s %s/%s", kind, namespace, name)
	return nil
}

var executorSubject = []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "muster-agent", Name: "muster-work-executor"}}

// What join installs for the Work executor: its ServiceAccount, admin over namespaced
// objects, namespaces and member BroadcastJobs, and nothing else cluster-scoped.
func TestJoinInstallsTheWorkExecutor(t *testing.T) {
	chart, err := agentChart("", agentJoin{})
	if err != nil {
		t.Fatal(err)
	}
	objs := chart.Unstructured()
	installed[corev1.ServiceAccount](t, objs, "ServiceAccount", "muster-agent", "muster-work-executor")
	admin := installed[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding", "", "muster-work-executor-admin")
	if admin.RoleRef.Name != "admin" || !cmp.Equal(admin.Subjects, executorSubject) {
		t.Errorf("muster-work-executor-admin binds %s to %+v, want admin to the executor", admin.RoleRef.Name, admin.Subjects)
	}
	own := installed[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding", "", "muster-work-executor")
	if own.RoleRef.Name != "muster-work-executor" || !cmp.Equal(own.Subjects, executorSubject) {
		t.Errorf("muster-work-executor binds %s to %+v, want ClusterRole muster-work-executor to the executor", own.RoleRef.Name, own.Subjects)
	}
	role := installed[rbacv1.ClusterRole](t, objs, "ClusterRole", "", "muster-work-executor")
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: all},
		{APIGroups: []string{"muster.dev"}, Resources: []string{"broadcastjobs"}, Verbs: all},
	}
	if diff := cmp.Diff(want, role.Rules); diff != "" {
		t.Errorf("ClusterRole muster-work-executor (-want +got):\n%s", diff)
	}
}

// The agent itself may do no more than its controllers need: no wildcard anywhere, and
// its only escalation is impersonating the executor, in its own namespace.
func TestJoinGivesTheAgentLeastPrivilege(t *testing.T) {
	chart, err := agentChart("", agentJoin{})
	if err != nil {
		t.Fatal(err)
	}
	objs := chart.Unstructured()
	cluster := installed[rbacv1.ClusterRole](t, objs, "ClusterRole", "", "muster-agent")
	ns := installed[rbacv1.Role](t, objs, "Role", "muster-agent", "muster-agent")
	for _, r := range append(slices.Clone(cluster.Rules), ns.Rules...) {
		for _, list := range [][]string{r.APIGroups, r.Resources, r.Verbs} {
			if slices.Contains(list, "*") {
				t.Errorf("the agent's rule %+v has a wildcard", r)
			}
		}
		if slices.ContainsFunc(r.Verbs, func(v string) bool { return v == "impersonate" || v == "escalate" || v == "bind" }) &&
			!cmp.Equal(r, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, ResourceNames: []string{"muster-work-executor"}, Verbs: []string{"impersonate"}}) {
			t.Errorf("the agent's rule %+v escalates beyond impersonating the executor", r)
		}
	}
	for _, r := range cluster.Rules {
		if slices.Contains(r.Resources, "secrets") || slices.Contains(r.Resources, "serviceaccounts") {
			t.Errorf("the agent's ClusterRole reaches %v in every namespace: %+v", r.Resources, r)
		}
	}
	if !slices.ContainsFunc(ns.Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Verbs, "impersonate") }) {
		t.Errorf("the agent's Role %+v cannot impersonate the executor", ns.Rules)
	}
	// What the controllers need cluster-wide, for any object: a rule narrowed by a
	// careless merge of the generated file (nodes only named kube-system) fails here.
	for _, need := range []struct{ group, resource, verb string }{
		{"", "pods", "create"}, {"", "pods", "watch"}, {"", "nodes", "watch"}, {"", "events", "watch"},
		{"batch", "jobs", "watch"}, {"batch", "jobs/status", "update"}, {"muster.dev", "broadcastjobs", "watch"},
		{"events.k8s.io", "events", "create"},
	} {
		if !slices.ContainsFunc(cluster.Rules, func(r rbacv1.PolicyRule) bool {
			return len(r.ResourceNames) == 0 && slices.Contains(r.APIGroups, need.group) && slices.Contains(r.Resources, need.resource) && slices.Contains(r.Verbs, need.verb)
		}) {
			t.Errorf("the agent's ClusterRole does not let it %s %s (group %q) of any name", need.verb, need.resource, need.group)
		}
	}
	binding := installed[rbacv1.RoleBinding](t, objs, "RoleBinding", "muster-agent", "muster-agent")
	if binding.RoleRef.Kind != "Role" || binding.RoleRef.Name != "muster-agent" ||
		!cmp.Equal(binding.Subjects, []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "muster-agent", Name: "muster-agent"}}) {
		t.Errorf("RoleBinding muster-agent %+v, want Role muster-agent for the agent's ServiceAccount", binding)
	}
}

func TestExecutorRoleBindings(t *testing.T) {
	binding := func(role string) rbacv1.ClusterRoleBinding {
		return rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: "muster-work-executor:" + role, Labels: map[string]string{"muster.dev/work-executor-role": "true"}},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
			Subjects:   executorSubject,
		}
	}
	for _, tc := range []struct {
		name  string
		roles []string
		want  []rbacv1.ClusterRoleBinding
	}{
		{"no extra role", nil, nil},
		{"one", []string{"cluster-admin"}, []rbacv1.ClusterRoleBinding{binding("cluster-admin")}},
		{"several, each once", []string{"crd-installer", "system:aggregate-to-edit", "crd-installer"},
			[]rbacv1.ClusterRoleBinding{binding("crd-installer"), binding("system:aggregate-to-edit")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chart, err := agentChart("", agentJoin{executorRoles: tc.roles})
			if err != nil {
				t.Fatal(err)
			}
			var got []rbacv1.ClusterRoleBinding
			for _, u := range chart.Unstructured() {
				if u.GetLabels()["muster.dev/work-executor-role"] != "true" {
					continue
				}
				var b rbacv1.ClusterRoleBinding
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &b); err != nil {
					t.Fatal(err)
				}
				got = append(got, b)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("bindings (-want +got):\n%s", diff)
			}
		})
	}
}

// A join names the executor's extra roles in full: what an earlier join bound and this
// one does not name is unbound; bindings join did not make are not touched.
func TestStaleExecutorBindings(t *testing.T) {
	made := func(name, role string) rbacv1.ClusterRoleBinding {
		return rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"muster.dev/work-executor-role": "true"}},
			RoleRef:    rbacv1.RoleRef{Kind: "ClusterRole", Name: role},
		}
	}
	byHand := rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "ops-grant"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "cluster-admin"}}
	existing := []rbacv1.ClusterRoleBinding{made("muster-work-executor:cluster-admin", "cluster-admin"), made("muster-work-executor:crds", "crds"), byHand}
	for _, tc := range []struct {
		name  string
		roles []string
		want  []string
	}{
		{"the same roles again", []string{"cluster-admin", "crds"}, nil},
		{"one fewer", []string{"crds"}, []string{"muster-work-executor:cluster-admin"}},
		{"none", nil, []string{"muster-work-executor:cluster-admin", "muster-work-executor:crds"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, staleExecutorBindings(existing, tc.roles)); diff != "" {
				t.Errorf("stale (-want +got):\n%s", diff)
			}
		})
	}
}
