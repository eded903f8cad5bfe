package health

import (
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// LeaseName is the agent's heartbeat Lease in its member namespace.
const LeaseName = "muster-agent"

// Availability is what a lease says about its cluster at one instant.
type Availability struct {
	Status  metav1.ConditionStatus
	Reason  string
	Message string
	// RecheckAfter is when the verdict changes if no renewal arrives; zero means never.
	RecheckAfter time.Duration
}

// Evaluate judges a cluster from its agent's lease (nil when there is none).
func Evaluate(now time.Time, lease *coordinationv1.Lease, grace time.Duration) Availability {
	if lease == nil || lease.Spec.RenewTime == nil {
		return Availability{Status: metav1.ConditionUnknown, Reason: musterv1.MemberClusterReasonLeaseNotFound, Message: "the agent has not renewed its lease yet"}
	}
	age := now.Sub(lease.Spec.RenewTime.Time)
	if age > grace {
		return Availability{
			Status:  metav1.ConditionUnknown,
			Reason:  musterv1.MemberClusterReasonAgentStoppedRenewing,
			Message: fmt.Sprintf("the agent last renewed its lease %s ago (grace period %s)", age.Round(time.Second), grace),
		}
	}
	return Availability{
		Status:       metav1.ConditionTrue,
		Reason:       musterv1.MemberClusterReasonAgentRenewing,
		Message:      "the agent renews its lease",
		RecheckAfter: grace - age + time.Second,
	}
}

// unreachableTaint keeps new placements off a cluster whose agent is gone.
var unreachableTaint = corev1.Taint{Key: musterv1.UnreachableTaintKey, Effect: corev1.TaintEffectNoSchedule}

// withUnreachableTaint returns taints with the unreachable taint present (want) or absent,
// and whether that changed anything. Other taints keep their order.
func withUnreachableTaint(taints []corev1.Taint, want bool, now time.Time) ([]corev1.Taint, bool) {
	out := make([]corev1.Taint, 0, len(taints)+1)
	found := false
	for _, t := range taints {
		if t.MatchTaint(&unreachableTaint) {
			found = true
			if !want {
				continue
			}
		}
		out = append(out, t)
	}
	if want && !found {
		t := unreachableTaint
		t.TimeAdded = &metav1.Time{Time: now}
		out = append(out, t)
	}
	return out, found != want
}
