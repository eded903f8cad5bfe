package worksync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/agent/worksync"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// rootBinding is a manifest that would make a ServiceAccount cluster-admin: what a Work
// may not do on a member whose admin did not allow it.
func rootBinding(t *testing.T, name string) musterv1.Manifest {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": map[string]any{"name": name},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "default", "namespace": "default"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return musterv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
}

func appliedCondition(w *musterv1.Work, ordinal int) *metav1.Condition {
	for _, m := range w.Status.Manifests {
		if int(m.Ordinal) == ordinal {
			return meta.FindStatusCondition(m.Conditions, musterv1.WorkApplied)
		}
	}
	return nil
}

// executorForbids is the member's refusal of the default executor patching (server-side
// apply) a ClusterRoleBinding.
func executorForbids(name string) string {
	return fmt.Sprintf(`clusterrolebindings.rbac.authorization.k8s.io %q is forbidden: User %q cannot patch resource "clusterrolebindings" in API group "rbac.authorization.k8s.io" at the cluster scope`,
		name, worksync.ExecutorUsername(worksync.DefaultExecutor))
}

// The attack and its control: under the default executor a Work's ConfigMap applies, and
// its ClusterRoleBinding to cluster-admin is refused by the member, reported with the
// member's message and not created. Once the member's admin binds the executor a role
// that may create it (as `musterctl join --work-executor-role` does), the same Work
// applies without anyone touching it.
func TestTheMemberRefusesWhatTheExecutorMayNotApplyUntilItsAdminAllowsIt(t *testing.T) {
	ctx := t.Context()
	ns, crb := unique("executor"), unique("work-root")
	key := createWork(t, unique("escalate"), nil, cmManifest(t, ns, "settings", "v1"), rootBinding(t, crb))
	w := waitForWork(t, key, func(w *musterv1.Work) bool { return reported(w) && appliedCondition(w, 1) != nil })
	if c := appliedCondition(w, 0); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("the ConfigMap's Applied = %+v, want True", c)
	}
	c := appliedCondition(w, 1)
	if c.Status != metav1.ConditionFalse || c.Reason != musterv1.WorkReasonForbidden || c.Message != executorForbids(crb) {
		t.Errorf("the ClusterRoleBinding's Applied = %s/%s %q\nwant False/%s %q", c.Status, c.Reason, c.Message, musterv1.WorkReasonForbidden, executorForbids(crb))
	}
	if err := env.Client.Get(ctx, types.NamespacedName{Name: crb}, &rbacv1.ClusterRoleBinding{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the ClusterRoleBinding in the member: %v, want NotFound", err)
	}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "settings"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("the ConfigMap in the member: %v", err)
	}

	grantExecutor(t, unique("rbac-manager"))
	waitForWork(t, key, func(w *musterv1.Work) bool {
		c := appliedCondition(w, 1)
		return c != nil && c.Status == metav1.ConditionTrue
	})
	var got rbacv1.ClusterRoleBinding
	if err := env.Client.Get(ctx, types.NamespacedName{Name: crb}, &got); err != nil {
		t.Fatalf("the ClusterRoleBinding after the grant: %v", err)
	}
	if got.Labels[worksync.WorkLabel] != key.Name {
		t.Errorf("the ClusterRoleBinding's labels %v, want %s=%s", got.Labels, worksync.WorkLabel, key.Name)
	}
	deleteWork(t, key)
	if err := env.Client.Get(ctx, types.NamespacedName{Name: crb}, &rbacv1.ClusterRoleBinding{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ClusterRoleBinding after its Work went: %v, want NotFound", err)
	}
}

// grantExecutor does what `musterctl join --work-executor-role NAME` does for a ClusterRole
// NAME that may manage ClusterRoleBindings and bind cluster-admin (RBAC lets nobody bind a
// role whose rights they do not hold, unless they may bind it).
func grantExecutor(t *testing.T, role string) {
	t.Helper()
	ctx := t.Context()
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterrolebindings"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, Verbs: []string{"bind"}, ResourceNames: []string{"cluster-admin"}},
	}}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "muster-work-executor:" + role},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: worksync.DefaultExecutor.Namespace, Name: worksync.DefaultExecutor.Name}},
	}
	for _, o := range []client.Object{cr, crb} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, o := range []client.Object{crb, cr} {
			_ = env.Client.Delete(context.WithoutCancel(ctx), o)
		}
	})
}

func deleteWork(t *testing.T, key types.NamespacedName) {
	t.Helper()
	if err := env.Client.Delete(t.Context(), &musterv1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(env.Client.Get(ctx, key, &musterv1.Work{})), nil
	})
	if err != nil {
		t.Fatalf("Work %s never went: %v", key, err)
	}
}

// A refused manifest is tried again, but not at full speed: the wait doubles from 2s, so
// ten seconds see four tries, and a Work nobody fixes costs the member little.
func TestARefusedManifestIsRetriedWithBackoff(t *testing.T) {
	failures := func() float64 {
		return envtest.Metric(t, "muster_agent_work_apply_failures_total", map[string]string{"cluster": clusterName})
	}
	before := failures()
	key := createWork(t, unique("refused"), nil, rootBinding(t, unique("refused-root")))
	waitForWork(t, key, func(w *musterv1.Work) bool { return reported(w) })
	start := time.Now()
	// Wait for the third try: tries come at 0, 2 and 4 seconds with the 2s doubling
	// backoff, within a second with the limiter's retry of errors (100ms doubling), and
	// never without a retry.
	envtest.Eventually(t, "three tries", func() (bool, string) {
		tries := failures() - before
		return tries >= 3, fmt.Sprintf("%v tries", tries)
	})
	took := time.Since(start)
	deleteWork(t, key)
	if took < 3*time.Second {
		t.Errorf("three tries within %v of the first refusal, want the retries 2s and more apart (2s doubling backoff)", took.Round(100*time.Millisecond))
	}
}
