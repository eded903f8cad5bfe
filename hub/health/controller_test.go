package health_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/health"
	"github.com/musterhq/muster/internal/testing/builders"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// renew writes the agent's lease as renewed at the fake clock's now.
func renew(t *testing.T, cluster string) {
	t.Helper()
	ctx := t.Context()
	now := metav1.NewMicroTime(clock.Now())
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: musterv1.MemberNamespace(cluster), Name: health.LeaseName}}
	err := env.Client.Get(ctx, types.NamespacedName{Namespace: lease.Namespace, Name: lease.Name}, lease)
	if err != nil {
		lease.Spec.RenewTime = &now
		if err := env.Client.Create(ctx, lease); err != nil {
			t.Fatal(err)
		}
		return
	}
	lease.Spec.RenewTime = &now
	if err := env.Client.Update(ctx, lease); err != nil {
		t.Fatal(err)
	}
}

func waitForAvailability(t *testing.T, cluster string, status metav1.ConditionStatus, tainted bool) {
	t.Helper()
	var mc musterv1.MemberCluster
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, types.NamespacedName{Name: cluster}, &mc); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(mc.Status.Conditions, musterv1.MemberClusterAvailable)
		hasTaint := slices.ContainsFunc(mc.Spec.Taints, func(t corev1.Taint) bool { return t.Key == musterv1.UnreachableTaintKey })
		return c != nil && c.Status == status && hasTaint == tainted, nil
	})
	if err != nil {
		t.Fatalf("cluster %s: want Available=%s tainted=%v, have conditions %+v taints %+v", cluster, status, tainted, mc.Status.Conditions, mc.Spec.Taints)
	}
}

func TestLeaseDrivesAvailabilityAndTaint(t *testing.T) {
	ctx := t.Context()
	admin := corev1.Taint{Key: "maintenance", Effect: corev1.TaintEffectPreferNoSchedule}
	mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}, Spec: musterv1.MemberClusterSpec{Accepted: true, Taints: []corev1.Taint{admin}}}
	if err := env.Client.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: musterv1.MemberNamespace("c1")}}); err != nil {
		t.Fatal(err)
	}
	// No lease yet: not known to be reachable, so no new work goes there.
	waitForAvailability(t, "c1", metav1.ConditionUnknown, true)

	renew(t, "c1")
	waitForAvailability(t, "c1", metav1.ConditionTrue, false)

	// 41s without a renewal; the lease's update event makes the reconciler look again.
	clock.SetTime(clock.Now().Add(grace + time.Second))
	touch(t, "c1")
	waitForAvailability(t, "c1", metav1.ConditionUnknown, true)

	renew(t, "c1")
	waitForAvailability(t, "c1", metav1.ConditionTrue, false)

	var got musterv1.MemberCluster
	if err := env.Client.Get(ctx, types.NamespacedName{Name: "c1"}, &got); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(got.Spec.Taints, func(t corev1.Taint) bool { return t.Key == admin.Key }) {
		t.Errorf("the administrator's taint was lost: %+v", got.Spec.Taints)
	}
}

func TestUnacceptedClusterIsLeftAlone(t *testing.T) {
	ctx := t.Context()
	reconciled := func() float64 {
		return envtest.Metric(t, "controller_runtime_reconcile_total", map[string]string{"controller": "health", "result": "success"})
	}
	before := reconciled()
	mc := builders.MakeMemberCluster("c2").Obj()
	if err := env.Client.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	// The reconciler has looked at the new cluster (no other cluster changes meanwhile).
	envtest.Eventually(t, "the cluster reconciled", func() (bool, string) {
		return reconciled() > before, fmt.Sprint(reconciled() - before)
	})
	if err := env.Client.Get(ctx, types.NamespacedName{Name: "c2"}, mc); err != nil {
		t.Fatal(err)
	}
	if len(mc.Status.Conditions) != 0 || len(mc.Spec.Taints) != 0 {
		t.Errorf("an unaccepted cluster got conditions %+v and taints %+v", mc.Status.Conditions, mc.Spec.Taints)
	}
}

// touch changes the lease without renewing it.
func touch(t *testing.T, cluster string) {
	t.Helper()
	var lease coordinationv1.Lease
	if err := env.Client.Get(t.Context(), types.NamespacedName{Namespace: musterv1.MemberNamespace(cluster), Name: health.LeaseName}, &lease); err != nil {
		t.Fatal(err)
	}
	if lease.Annotations == nil {
		lease.Annotations = map[string]string{}
	}
	lease.Annotations["test/touched"] = clock.Now().String()
	if err := env.Client.Update(t.Context(), &lease); err != nil {
		t.Fatal(err)
	}
}
