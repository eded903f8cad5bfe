package registration_test

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/identity"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/registration"
	"github.com/musterhq/muster/internal/testing/builders"
)

func TestUnacceptedClusterGetsNoNamespaceOrRBAC(t *testing.T) {
	newCluster(t, "pending", false)
	eventually(t, "Accepted=False", func(ctx context.Context) (bool, error) {
		c, err := acceptedCondition(ctx, "pending")
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == musterv1.MemberClusterReasonNotAccepted, err
	})
	ctx := t.Context()
	if exists(ctx, &corev1.Namespace{}, "", musterv1.MemberNamespace("pending")) {
		t.Error("an unaccepted cluster got its hub namespace")
	}
	if exists(ctx, &rbacv1.ClusterRoleBinding{}, "", registration.ClusterRoleName("pending")) {
		t.Error("an unaccepted cluster got a ClusterRoleBinding")
	}
}

// An accepted cluster whose agent has not joined yet (or must join again after a deny)
// gets its namespace and roles, but no binding: no certificate has a current join.
func TestAcceptedClusterWithoutAJoinGetsNoBindings(t *testing.T) {
	newCluster(t, "nojoin", true)
	ns := musterv1.MemberNamespace("nojoin")
	eventually(t, "namespace, roles and Accepted=True", func(ctx context.Context) (bool, error) {
		c, err := acceptedCondition(ctx, "nojoin")
		return err == nil && c != nil && c.Status == metav1.ConditionTrue &&
			exists(ctx, &corev1.Namespace{}, "", ns) && exists(ctx, &rbacv1.Role{}, ns, "muster:agent") &&
			exists(ctx, &rbacv1.ClusterRole{}, "", registration.ClusterRoleName("nojoin")), nil
	})
	ctx := t.Context()
	if exists(ctx, &rbacv1.RoleBinding{}, ns, "muster:agent") || exists(ctx, &rbacv1.ClusterRoleBinding{}, "", registration.ClusterRoleName("nojoin")) {
		t.Error("an accepted cluster with no join got bindings")
	}
}

func TestAcceptedClusterBindsOnlyItsCurrentJoin(t *testing.T) {
	joinID := boundCluster(t, "alpha", builders.NewKey())
	ctx := t.Context()
	var crb rbacv1.ClusterRoleBinding
	if err := env.Client.Get(ctx, types.NamespacedName{Name: registration.ClusterRoleName("alpha")}, &crb); err != nil {
		t.Fatal(err)
	}
	if want := identity.JoinGroup("alpha", joinID); len(crb.Subjects) != 1 || crb.Subjects[0].Name != want {
		t.Errorf("ClusterRoleBinding subjects = %+v, want only group %s (not %s, which every certificate of alpha carries)", crb.Subjects, want, identity.ClusterGroup("alpha"))
	}
	var cr rbacv1.ClusterRole
	if err := env.Client.Get(ctx, types.NamespacedName{Name: registration.ClusterRoleName("alpha")}, &cr); err != nil {
		t.Fatal(err)
	}
	for _, rule := range cr.Rules {
		if slices.Contains(rule.Resources, "memberclusters") || slices.Contains(rule.Resources, "memberclusters/status") {
			if !slices.Equal(rule.ResourceNames, []string{"alpha"}) {
				t.Errorf("rule %+v reaches MemberClusters other than alpha", rule)
			}
		}
	}
}

// A deny by any writer (here a bare edit of spec.accepted) takes the bindings away and
// forgets the join, with a warning event.
func TestDeniedClusterLosesItsBindingsAndJoin(t *testing.T) {
	boundCluster(t, "beta", builders.NewKey())
	mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "beta"}}
	if err := env.Client.Patch(t.Context(), mc, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"accepted":false}}`))); err != nil {
		t.Fatal(err)
	}
	ns := musterv1.MemberNamespace("beta")
	eventually(t, "bindings and join gone, Accepted=False", func(ctx context.Context) (bool, error) {
		c, err := acceptedCondition(ctx, "beta")
		if err != nil || c.Status != metav1.ConditionFalse {
			return false, err
		}
		mc, err := getCluster(ctx, "beta")
		_, joined := mc.Annotations[identity.AgentJoinAnnotation]
		return err == nil && !joined &&
			!exists(ctx, &rbacv1.RoleBinding{}, ns, "muster:agent") &&
			!exists(ctx, &rbacv1.ClusterRoleBinding{}, "", registration.ClusterRoleName("beta")), err
	})
	expectEvent(t, "beta", musterv1.MemberClusterReasonAccessRevoked, "beta")
}

// The readmission policy: nobody accepts a denied cluster while its old join is recorded
// (musterctl accept forgets it in the same write).
func TestReacceptingWithTheOldJoinIsRefused(t *testing.T) {
	newCluster(t, "theta-denied", false)
	eventually(t, "Accepted=False", func(ctx context.Context) (bool, error) {
		c, err := acceptedCondition(ctx, "theta-denied")
		return c != nil && c.Status == metav1.ConditionFalse, err
	})
	ctx := t.Context()
	mc, err := getCluster(ctx, "theta-denied")
	if err != nil {
		t.Fatal(err)
	}
	stale := mc.DeepCopy()
	stale.Spec.Accepted = true
	stale.Annotations = map[string]string{identity.AgentJoinAnnotation: newJoinID(t)}
	if err := env.Client.Update(ctx, stale, client.DryRunAll); !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
		t.Errorf("accepting a denied cluster with a recorded join: got %v, want refusal", err)
	}
	fresh := mc.DeepCopy()
	fresh.Spec.Accepted = true
	if err := env.Client.Update(ctx, fresh, client.DryRunAll); err != nil {
		t.Errorf("accepting a denied cluster without a join: %v", err)
	}
}
