package health

import (
	"fmt"
	"slices"
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

// Seen is what this hub process has read of one agent's lease: the renewTime it last read
// and when, on the hub's own clock, that renewal counts from. Waiting says no renewal has
// been seen yet from a cluster recorded unavailable, which stays so until one is.
type Seen struct {
	RenewTime time.Time
	At        time.Time
	Waiting   bool
}

// Evaluate judges a cluster from its agent's lease (nil when there is none) as this hub
// process has seen it. prev is what the previous evaluation saw (nil for the first one)
// and recorded the cluster's Available status as the MemberCluster holds it ("" for none).
// Ages are measured on the hub's clock from when it saw each renewal, so an agent whose
// clock runs ahead cannot stay Available after it stops. On a first read a lease renewed
// within the grace period, by its own stamp, counts as renewed then; beyond that a
// cluster recorded Available gets a fresh grace period too (this hub may have been the
// one cut off, or just restarted). A cluster recorded unavailable stays so until this process sees a renewal,
// so that a hub restart never flips a verdict and back.
func Evaluate(now time.Time, lease *coordinationv1.Lease, grace time.Duration, prev *Seen, recorded metav1.ConditionStatus) (Availability, *Seen) {
	if lease == nil || lease.Spec.RenewTime == nil {
		// Seen, with no renewal: the first one this process then reads is a renewal seen.
		return Availability{Status: metav1.ConditionUnknown, Reason: musterv1.MemberClusterReasonLeaseNotFound, Message: "the agent has not renewed its lease yet"}, &Seen{}
	}
	seen := renewedAt(now, lease.Spec.RenewTime.Time, grace, prev, recorded)
	if seen.Waiting {
		return Availability{
			Status:  metav1.ConditionUnknown,
			Reason:  musterv1.MemberClusterReasonAgentStoppedRenewing,
			Message: "the hub has seen no renewal of the agent's lease since it started",
		}, &seen
	}
	age := now.Sub(seen.At)
	if age > grace {
		return Availability{
			Status:  metav1.ConditionUnknown,
			Reason:  musterv1.MemberClusterReasonAgentStoppedRenewing,
			Message: fmt.Sprintf("the agent last renewed its lease %s ago (grace period %s)", age.Round(time.Second), grace),
		}, &seen
	}
	return Availability{
		Status:       metav1.ConditionTrue,
		Reason:       musterv1.MemberClusterReasonAgentRenewing,
		Message:      "the agent renews its lease",
		RecheckAfter: grace - age + time.Second,
	}, &seen
}

// renewedAt returns when, on the hub's clock, the lease last renewed at renew counts as
// renewed.
func renewedAt(now, renew time.Time, grace time.Duration, prev *Seen, recorded metav1.ConditionStatus) Seen {
	switch {
	case prev != nil && prev.RenewTime.Equal(renew):
		return *prev
	case prev != nil:
		return Seen{RenewTime: renew, At: now}
	case recorded == metav1.ConditionUnknown || recorded == metav1.ConditionFalse:
		return Seen{RenewTime: renew, Waiting: true}
	case now.Sub(renew) <= grace:
		// A first read of a renewal the agent stamped within the grace period: it counts
		// as seen now, not when the agent's clock says. An agent clock running behind
		// would otherwise age the lease early, and fenced work (clusters.Fencing) would
		// move less than the margin after its agent stopped it.
		return Seen{RenewTime: renew, At: now}
	case recorded == metav1.ConditionTrue:
		return Seen{RenewTime: renew, At: now}
	}
	return Seen{RenewTime: renew, At: renew}
}

// unreachableTaints keep new placements off a cluster whose agent is gone (NoSchedule)
// and, once a fleet object's toleration of it runs out, move its work elsewhere
// (NoExecute), as node.kubernetes.io/unreachable does for pods.
var unreachableTaints = []corev1.Taint{
	{Key: musterv1.UnreachableTaintKey, Effect: corev1.TaintEffectNoSchedule},
	{Key: musterv1.UnreachableTaintKey, Effect: corev1.TaintEffectNoExecute},
}

// withUnreachableTaint returns taints with the unreachable taints present (want) or
// absent, and whether that changed anything. Other taints keep their order. A NoExecute
// taint without timeAdded (an administrator's) gets now: eviction counts from it.
func withUnreachableTaint(taints []corev1.Taint, want bool, now time.Time) ([]corev1.Taint, bool) {
	out := make([]corev1.Taint, 0, len(taints)+len(unreachableTaints))
	changed := false
	found := make([]bool, len(unreachableTaints))
	for _, t := range taints {
		if i := slices.IndexFunc(unreachableTaints, func(u corev1.Taint) bool { return t.MatchTaint(&u) }); i >= 0 {
			found[i] = true
			if !want {
				changed = true
				continue
			}
		}
		if t.Effect == corev1.TaintEffectNoExecute && t.TimeAdded == nil {
			t.TimeAdded = &metav1.Time{Time: now}
			changed = true
		}
		out = append(out, t)
	}
	for i, t := range unreachableTaints {
		if want && !found[i] {
			t.TimeAdded = &metav1.Time{Time: now}
			out = append(out, t)
			changed = true
		}
	}
	return out, changed
}
