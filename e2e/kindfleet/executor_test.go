//go:build e2ekind

package kindfleet

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

// TestTheAgentIsNotClusterAdmin asks member1's API server what the agent's ServiceAccount,
// as `musterctl join` installed it, may do: not everything everywhere (issue 28 found
// `kubectl auth can-i '*' '*'` said yes), not read other namespaces' Secrets, not bind
// roles; it may impersonate the Work executor and create pods (the control).
func TestTheAgentIsNotClusterAdmin(t *testing.T) {
	muster(t)
	member := fleet.Members[0]
	agent := "system:serviceaccount:" + musterv1.AgentNamespace + ":muster-agent"
	for _, tc := range []struct {
		attrs authzv1.ResourceAttributes
		want  bool
	}{
		{authzv1.ResourceAttributes{Verb: "*", Group: "*", Resource: "*"}, false},
		{authzv1.ResourceAttributes{Verb: "get", Resource: "secrets", Namespace: "kube-system"}, false},
		{authzv1.ResourceAttributes{Verb: "create", Group: rbacv1.GroupName, Resource: "clusterrolebindings"}, false},
		{authzv1.ResourceAttributes{Verb: "impersonate", Resource: "serviceaccounts", Namespace: "kube-system", Name: "default"}, false},
		{authzv1.ResourceAttributes{Verb: "impersonate", Resource: "serviceaccounts", Namespace: musterv1.AgentNamespace, Name: musterv1.WorkExecutor}, true},
		{authzv1.ResourceAttributes{Verb: "create", Resource: "pods", Namespace: "default"}, true},
	} {
		attrs := tc.attrs
		review, err := member.Clientset.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
			User: agent, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + musterv1.AgentNamespace, "system:authenticated"}, ResourceAttributes: &attrs,
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if review.Status.Allowed != tc.want {
			t.Errorf("may the agent %s %s/%s in %q (%s)? %t, want %t", attrs.Verb, attrs.Group, attrs.Resource, attrs.Namespace, attrs.Name, review.Status.Allowed, tc.want)
		}
	}
}

// Attack row (issue 28) on real clusters: the in-cluster agent applies a Work's ConfigMap
// (the control) and member1 refuses its ClusterRoleBinding to cluster-admin, with the
// member's Forbidden message naming the Work executor.
func TestAWorkCannotMakeAnyoneClusterAdmin(t *testing.T) {
	muster(t)
	ctx := t.Context()
	member := fleet.Members[0]
	var manifests []musterv1.Manifest
	for _, obj := range []map[string]any{
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "executor-control", "namespace": "default"}, "data": map[string]any{"k": "v"}},
		{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": map[string]any{"name": "kind-work-root"},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
			"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "default", "namespace": "default"}}},
	} {
		raw, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		manifests = append(manifests, musterv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	work := &musterv1.Work{
		ObjectMeta: metav1.ObjectMeta{Name: "executor-attack", Namespace: musterv1.MemberNamespace(member.Name)},
		Spec:       musterv1.WorkSpec{Manifests: manifests},
	}
	if err := fleet.Hub.Client.Create(ctx, work); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.WithoutCancel(ctx), work) })
	var got musterv1.Work
	err := framework.Until(ctx, time.Minute, "both manifests reported", func(ctx context.Context) (bool, string, error) {
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(work), &got); err != nil {
			return false, err.Error(), nil
		}
		return len(got.Status.Manifests) == 2, fmt.Sprintf("%+v", got.Status.Manifests), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `clusterrolebindings.rbac.authorization.k8s.io "kind-work-root" is forbidden: User "system:serviceaccount:muster-agent:muster-work-executor" cannot patch resource "clusterrolebindings" in API group "rbac.authorization.k8s.io" at the cluster scope`
	for _, m := range got.Status.Manifests {
		c := meta.FindStatusCondition(m.Conditions, musterv1.WorkApplied)
		switch m.Resource.Kind {
		case "ConfigMap":
			if c == nil || c.Status != metav1.ConditionTrue {
				t.Errorf("the ConfigMap's Applied = %+v, want True", c)
			}
		case "ClusterRoleBinding":
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != musterv1.WorkReasonForbidden || c.Message != want {
				t.Errorf("the ClusterRoleBinding's Applied = %+v\nwant False/%s %q", c, musterv1.WorkReasonForbidden, want)
			}
		}
	}
	if err := member.Client.Get(ctx, types.NamespacedName{Name: "kind-work-root"}, &rbacv1.ClusterRoleBinding{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ClusterRoleBinding in %s: %v, want NotFound", member.Name, err)
	}
	if err := member.Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "executor-control"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("the ConfigMap in %s: %v", member.Name, err)
	}
}
