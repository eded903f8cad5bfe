//go:build e2e

package work

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

// executorUser is the identity agents apply Works as, unless the member says otherwise.
const executorUser = "system:serviceaccount:muster-agent:muster-work-executor"

// rootBinding makes the default ServiceAccount of namespace default cluster-admin.
func rootBinding(name string) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "default"}},
	}
}

func manifestApplied(w *musterv1.Work, kind, name string) *metav1.Condition {
	if ms := manifestStatusOf(w, kind, name); ms != nil {
		return meta.FindStatusCondition(ms.Conditions, musterv1.WorkApplied)
	}
	return nil
}

// deleteWorkAndWait deletes a Work and waits until its agent let it go.
func deleteWorkAndWait(t *testing.T, w *musterv1.Work) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	if err := hub().Delete(ctx, w); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if err := framework.Until(ctx, 30*time.Second, "Work "+w.Name+" to be gone", func(ctx context.Context) (bool, string, error) {
		return apierrors.IsNotFound(hub().Get(ctx, keyOf(w), &musterv1.Work{})), "", nil
	}); err != nil {
		t.Fatal(err)
	}
}

// Attack row (issue 28): a Work that would make a ServiceAccount cluster-admin is refused
// by the member under the default executor, with the member's own Forbidden message, and
// the binding never exists; the same Work's ConfigMap (the control) applies. Deleting the
// Work is not held up by the object the member refused.
func TestTheDefaultExecutorCannotMakeAnyoneClusterAdmin(t *testing.T) {
	ctx := t.Context()
	m := member("member2")
	w := newWork(t, "member2", "executor-attack", configMap("default", "executor-control"), rootBinding("e2e-work-root"))
	if err := hub().Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	done := waitForWork(t, keyOf(w), 30*time.Second, "both manifests reported", func(w *musterv1.Work) bool {
		return manifestApplied(w, "ConfigMap", "executor-control") != nil && manifestApplied(w, "ClusterRoleBinding", "e2e-work-root") != nil
	})
	if c := manifestApplied(done, "ConfigMap", "executor-control"); c.Status != metav1.ConditionTrue {
		t.Errorf("the ConfigMap's Applied = %+v, want True", c)
	}
	want := fmt.Sprintf(`clusterrolebindings.rbac.authorization.k8s.io "e2e-work-root" is forbidden: User %q cannot patch resource "clusterrolebindings" in API group "rbac.authorization.k8s.io" at the cluster scope`, executorUser)
	if c := manifestApplied(done, "ClusterRoleBinding", "e2e-work-root"); c.Status != metav1.ConditionFalse || c.Reason != musterv1.WorkReasonForbidden || c.Message != want {
		t.Errorf("the ClusterRoleBinding's Applied = %s/%s %q\nwant False/%s %q", c.Status, c.Reason, c.Message, musterv1.WorkReasonForbidden, want)
	}
	if err := m.Client.Get(ctx, types.NamespacedName{Name: "e2e-work-root"}, &rbacv1.ClusterRoleBinding{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ClusterRoleBinding in member2: %v, want NotFound", err)
	}
	if err := m.Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "executor-control"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("the ConfigMap in member2: %v", err)
	}
	deleteWorkAndWait(t, w)
}

// A member admin who trusts the hub with more says so at join: after `musterctl join
// --work-executor-role cluster-admin` the refused Work applies without being touched, and a
// join without the flag takes the right back.
func TestAWorkExecutorRoleLetsTheMemberApplyMore(t *testing.T) {
	ctx := t.Context()
	m := member("member1")
	w := newWork(t, "member1", "executor-granted", rootBinding("e2e-work-granted"))
	if err := hub().Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteWorkAndWait(t, w) })
	waitForWork(t, keyOf(w), 30*time.Second, "the refusal", func(w *musterv1.Work) bool {
		c := manifestApplied(w, "ClusterRoleBinding", "e2e-work-granted")
		return c != nil && c.Reason == musterv1.WorkReasonForbidden
	})
	if _, err := muster.Join(ctx, m, m.Name, "--work-executor-role", "cluster-admin"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The binding goes with its Work while the executor may still delete it.
		deleteWorkAndWait(t, w)
		ctx := context.WithoutCancel(ctx)
		if _, err := muster.Join(ctx, m, m.Name); err != nil {
			t.Errorf("re-joining member1 without the role: %v", err)
		}
		err := m.Client.Get(ctx, types.NamespacedName{Name: "muster-work-executor:cluster-admin"}, &rbacv1.ClusterRoleBinding{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("the executor's cluster-admin binding after a join without the flag: %v, want NotFound", err)
		}
	})
	// The agent retries a refused manifest with a backoff that doubles up to 5 minutes;
	// the refusal is seconds old, so the next try comes within seconds.
	waitForWork(t, keyOf(w), 60*time.Second, "the ClusterRoleBinding applied", func(w *musterv1.Work) bool {
		c := manifestApplied(w, "ClusterRoleBinding", "e2e-work-granted")
		return c != nil && c.Status == metav1.ConditionTrue
	})
	if err := m.Client.Get(ctx, types.NamespacedName{Name: "e2e-work-granted"}, &rbacv1.ClusterRoleBinding{}); err != nil {
		t.Errorf("the ClusterRoleBinding in member1: %v", err)
	}
}
