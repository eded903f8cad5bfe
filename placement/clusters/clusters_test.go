package clusters

import (
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func member(name string, mutate ...func(*musterv1.MemberCluster)) musterv1.MemberCluster {
	mc := musterv1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"env": "prod"}},
		Spec:       musterv1.MemberClusterSpec{Accepted: true},
		Status: musterv1.MemberClusterStatus{Conditions: []metav1.Condition{
			{Type: musterv1.MemberClusterAvailable, Status: metav1.ConditionTrue, Reason: "LeaseRenewed"},
		}},
	}
	for _, m := range mutate {
		m(&mc)
	}
	return mc
}

func TestCheck(t *testing.T) {
	unreachable := func(mc *musterv1.MemberCluster) {
		mc.Spec.Taints = []corev1.Taint{{Key: musterv1.UnreachableTaintKey, Effect: corev1.TaintEffectNoSchedule}}
		mc.Status.Conditions[0].Status = metav1.ConditionUnknown
	}
	cases := []struct {
		name      string
		placement *musterv1.Placement
		mc        musterv1.MemberCluster
		want      string
	}{
		{"no placement, healthy cluster", nil, member("a"), ""},
		{"not accepted", nil, member("a", func(mc *musterv1.MemberCluster) { mc.Spec.Accepted = false }), NotAccepted},
		{"named", &musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{"a"}}}, member("a"), ""},
		{"not named", &musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{"b"}}}, member("a"), NotNamed},
		{"selector matches", &musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}}, member("a"), ""},
		{"selector does not match", &musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}}}, member("a"), SelectorMismatch},
		{"untolerated NoSchedule taint", nil, member("a", func(mc *musterv1.MemberCluster) {
			mc.Spec.Taints = []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoSchedule}}
		}), UntoleratedTaint},
		{"PreferNoSchedule taint is no bar", nil, member("a", func(mc *musterv1.MemberCluster) {
			mc.Spec.Taints = []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectPreferNoSchedule}}
		}), ""},
		{"tolerated taint", &musterv1.Placement{Tolerations: []corev1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpExists}}}, member("a", func(mc *musterv1.MemberCluster) {
			mc.Spec.Taints = []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoSchedule}}
		}), ""},
		{"unreachable cluster", nil, member("a", unreachable), UntoleratedTaint},
		{"NoExecute taint tolerated for a time keeps new work off", &musterv1.Placement{Tolerations: []corev1.Toleration{{
			Key: "maintenance", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300),
		}}}, member("a", func(mc *musterv1.MemberCluster) {
			mc.Spec.Taints = []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoExecute}}
		}), UntoleratedTaint},
		{"NoExecute taint tolerated for good", &musterv1.Placement{Tolerations: []corev1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpExists}}},
			member("a", func(mc *musterv1.MemberCluster) {
				mc.Spec.Taints = []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoExecute}}
			}), ""},
		{"unreachable taint tolerated but agent away", &musterv1.Placement{Tolerations: []corev1.Toleration{{Key: musterv1.UnreachableTaintKey, Operator: corev1.TolerationOpExists}}}, member("a", unreachable), NotAvailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, detail := Check(tc.placement, &tc.mc)
			if got != tc.want {
				t.Errorf("Check = %q (%s), want %q", got, detail, tc.want)
			}
		})
	}
}

func TestEligible(t *testing.T) {
	members := []musterv1.MemberCluster{member("c"), member("a"), member("b", func(mc *musterv1.MemberCluster) { mc.Spec.Accepted = false })}
	names, excluded := Eligible(nil, members)
	if !slices.Equal(names, []string{"a", "c"}) || !maps.Equal(excluded, map[string]int{NotAccepted: 1}) {
		t.Errorf("Eligible = %v %v", names, excluded)
	}
}

func TestHoldingKeepsUnhealthyClustersButNotOnesThatLeftOrAreDeselected(t *testing.T) {
	members := []musterv1.MemberCluster{
		member("healthy"),
		member("unavailable", func(mc *musterv1.MemberCluster) { mc.Status.Conditions[0].Status = metav1.ConditionUnknown }),
		member("tainted", func(mc *musterv1.MemberCluster) {
			mc.Spec.Taints = []corev1.Taint{{Key: musterv1.UnreachableTaintKey, Effect: corev1.TaintEffectNoSchedule}}
		}),
		member("leaving", func(mc *musterv1.MemberCluster) { mc.DeletionTimestamp = &metav1.Time{} }),
		member("unaccepted", func(mc *musterv1.MemberCluster) { mc.Spec.Accepted = false }),
		member("other"),
	}
	placement := &musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{"healthy", "unavailable", "tainted", "leaving", "unaccepted"}}}
	if got := Holding(placement, members); !slices.Equal(got, []string{"healthy", "tainted", "unavailable"}) {
		t.Errorf("Holding = %v, want healthy, tainted and unavailable", got)
	}
	if got, _ := Eligible(placement, members); !slices.Equal(got, []string{"healthy"}) {
		t.Errorf("Eligible = %v, want only healthy", got)
	}
}
