package health

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestEvaluate(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	renewedAgo := func(d time.Duration) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: now.Add(-d)}}}
	}
	seen := func(renewedAgo, seenAgo time.Duration) *Seen {
		return &Seen{RenewTime: now.Add(-renewedAgo), At: now.Add(-seenAgo)}
	}
	cases := []struct {
		name        string
		lease       *coordinationv1.Lease
		prev        *Seen
		recorded    metav1.ConditionStatus
		wantStatus  metav1.ConditionStatus
		wantReason  string
		wantRecheck time.Duration
	}{
		{name: "no lease yet", wantStatus: metav1.ConditionUnknown, wantReason: musterv1.MemberClusterReasonLeaseNotFound},
		{name: "lease without renew time", lease: &coordinationv1.Lease{}, wantStatus: metav1.ConditionUnknown, wantReason: musterv1.MemberClusterReasonLeaseNotFound},
		{name: "just renewed", lease: renewedAgo(0), wantStatus: metav1.ConditionTrue, wantReason: musterv1.MemberClusterReasonAgentRenewing, wantRecheck: 41 * time.Second},
		// A first read counts a renewal stamped within the grace period as seen now: an
		// agent clock running behind must not age it early (fenced work moves only the
		// fencing margin after its agent stops it).
		{name: "first read of a renewal stamped 30s ago", lease: renewedAgo(30 * time.Second), wantStatus: metav1.ConditionTrue, wantReason: musterv1.MemberClusterReasonAgentRenewing, wantRecheck: 41 * time.Second},
		{name: "first read exactly at the grace period", lease: renewedAgo(40 * time.Second), wantStatus: metav1.ConditionTrue, wantReason: musterv1.MemberClusterReasonAgentRenewing, wantRecheck: 41 * time.Second},
		{name: "past the grace period", lease: renewedAgo(41 * time.Second), wantStatus: metav1.ConditionUnknown, wantReason: musterv1.MemberClusterReasonAgentStoppedRenewing},
		// A hub that restarts (or was itself cut off) finds stale leases: a cluster it had
		// recorded Available gets a fresh grace period instead of turning Unknown at once.
		{name: "first read of a stale lease of an available cluster", lease: renewedAgo(10 * time.Minute), recorded: metav1.ConditionTrue,
			wantStatus: metav1.ConditionTrue, wantReason: musterv1.MemberClusterReasonAgentRenewing, wantRecheck: 41 * time.Second},
		{name: "the same stale renewal, a grace period later", lease: renewedAgo(10 * time.Minute), prev: seen(10*time.Minute, 41*time.Second), recorded: metav1.ConditionTrue,
			wantStatus: metav1.ConditionUnknown, wantReason: musterv1.MemberClusterReasonAgentStoppedRenewing},
		// An agent whose clock runs an hour ahead writes renewTimes in the future: once it
		// stops, the hub's own clock still sees no renewal for the grace period.
		{name: "a renewal from an agent whose clock runs ahead", lease: renewedAgo(-time.Hour),
			wantStatus: metav1.ConditionTrue, wantReason: musterv1.MemberClusterReasonAgentRenewing, wantRecheck: 41 * time.Second},
		{name: "that agent stopped", lease: renewedAgo(-time.Hour), prev: seen(-time.Hour, 41*time.Second), recorded: metav1.ConditionTrue,
			wantStatus: metav1.ConditionUnknown, wantReason: musterv1.MemberClusterReasonAgentStoppedRenewing},
		// A hub that restarts must not turn a cluster it recorded unavailable Available on
		// a renewTime that looks fresh (an agent clock running ahead) until it sees a renewal.
		{name: "first read of a fresh-looking lease of an unavailable cluster", lease: renewedAgo(-30 * time.Second), recorded: metav1.ConditionUnknown,
			wantStatus: metav1.ConditionUnknown, wantReason: musterv1.MemberClusterReasonAgentStoppedRenewing},
		{name: "still no renewal seen", lease: renewedAgo(-30 * time.Second), prev: &Seen{RenewTime: now.Add(30 * time.Second), Waiting: true},
			recorded: metav1.ConditionUnknown, wantStatus: metav1.ConditionUnknown, wantReason: musterv1.MemberClusterReasonAgentStoppedRenewing},
		{name: "then a renewal", lease: renewedAgo(-40 * time.Second), prev: &Seen{RenewTime: now.Add(30 * time.Second), Waiting: true},
			recorded: metav1.ConditionUnknown, wantStatus: metav1.ConditionTrue, wantReason: musterv1.MemberClusterReasonAgentRenewing, wantRecheck: 41 * time.Second},
		{name: "a renewal seen changes counts from when it was seen", lease: renewedAgo(time.Hour), prev: seen(2*time.Hour, time.Minute),
			wantStatus: metav1.ConditionTrue, wantReason: musterv1.MemberClusterReasonAgentRenewing, wantRecheck: 41 * time.Second},
		{name: "an unchanged renewal ages on the hub's clock", lease: renewedAgo(0), prev: seen(0, 30*time.Second), recorded: metav1.ConditionTrue,
			wantStatus: metav1.ConditionTrue, wantReason: musterv1.MemberClusterReasonAgentRenewing, wantRecheck: 11 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := Evaluate(now, tc.lease, 40*time.Second, tc.prev, tc.recorded)
			if got.Status != tc.wantStatus || got.Reason != tc.wantReason || got.RecheckAfter != tc.wantRecheck {
				t.Errorf("Evaluate() = %+v, want status %s reason %s recheck %s", got, tc.wantStatus, tc.wantReason, tc.wantRecheck)
			}
		})
	}
}

func TestWithUnreachableTaint(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	admin := corev1.Taint{Key: "maintenance", Effect: corev1.TaintEffectNoSchedule}
	unreachable := corev1.Taint{Key: "muster.dev/unreachable", Effect: corev1.TaintEffectNoSchedule, TimeAdded: &metav1.Time{Time: now}}
	unreachableExecute := corev1.Taint{Key: "muster.dev/unreachable", Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: now}}
	drain := corev1.Taint{Key: "maintenance", Effect: corev1.TaintEffectNoExecute}
	drainStamped := corev1.Taint{Key: "maintenance", Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: now}}
	cases := []struct {
		name        string
		taints      []corev1.Taint
		want        bool
		wantTaints  []corev1.Taint
		wantChanged bool
	}{
		{name: "add next to an administrator's taint", taints: []corev1.Taint{admin}, want: true, wantTaints: []corev1.Taint{admin, unreachable, unreachableExecute}, wantChanged: true},
		{name: "already there", taints: []corev1.Taint{unreachable, unreachableExecute}, want: true, wantTaints: []corev1.Taint{unreachable, unreachableExecute}},
		{name: "NoExecute added beside the NoSchedule an older hub set", taints: []corev1.Taint{unreachable}, want: true,
			wantTaints: []corev1.Taint{unreachable, unreachableExecute}, wantChanged: true},
		{name: "remove, keeping the administrator's", taints: []corev1.Taint{unreachable, admin, unreachableExecute}, want: false, wantTaints: []corev1.Taint{admin}, wantChanged: true},
		{name: "nothing to remove", taints: []corev1.Taint{admin}, want: false, wantTaints: []corev1.Taint{admin}},
		{name: "an administrator's NoExecute taint gets its time", taints: []corev1.Taint{drain}, want: false, wantTaints: []corev1.Taint{drainStamped}, wantChanged: true},
		{name: "a stamped one keeps it", taints: []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: now.Add(-time.Hour)}}},
			want: false, wantTaints: []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: now.Add(-time.Hour)}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := withUnreachableTaint(tc.taints, tc.want, now)
			if changed != tc.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tc.wantChanged)
			}
			if diff := cmp.Diff(tc.wantTaints, got); diff != "" {
				t.Errorf("taints (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSeenAtIsWhenThisHubSawTheRenewal(t *testing.T) {
	stamped := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	saw := stamped.Add(42 * time.Second)
	r := &Reconciler{}
	if _, ok := r.SeenAt("c", stamped); ok {
		t.Error("a cluster this hub has not judged has a time it saw a renewal")
	}
	r.remember("c", &Seen{RenewTime: stamped, At: saw})
	if got, ok := r.SeenAt("c", stamped); !ok || !got.Equal(saw) {
		t.Errorf("SeenAt = %v, %v; want %v, the hub's own time", got, ok, saw)
	}
	if _, ok := r.SeenAt("c", stamped.Add(time.Second)); ok {
		t.Error("a renewal the hub has not judged yet has a time it was seen")
	}
	r.remember("c", &Seen{RenewTime: stamped, Waiting: true})
	if _, ok := r.SeenAt("c", stamped); ok {
		t.Error("a renewal the hub waits to see change has a time it was seen")
	}
}
