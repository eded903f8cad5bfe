package clusters

import (
	"fmt"
	"math"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Eviction says when a fleet object's work must leave a member cluster because of the
// cluster's NoExecute taints, as the node lifecycle's taint manager says it for pods.
type Eviction struct {
	// At is when the work goes; zero means never (no NoExecute taint, or every one is
	// tolerated without tolerationSeconds).
	At time.Time
	// Taint is the taint that sets At, for messages.
	Taint corev1.Taint
}

// Due says whether the work must go at now.
func (e Eviction) Due(now time.Time) bool { return !e.At.IsZero() && !now.Before(e.At) }

// Describe says why the work goes, for conditions and events.
func (e Eviction) Describe() string {
	return fmt.Sprintf("the cluster has taint %s, which the placement does not tolerate any longer", e.Taint.ToString())
}

// EvictAt returns when work placed under tolerations must leave a cluster with taints. An
// untolerated NoExecute taint evicts as soon as it is counted; a tolerated one after the
// shortest tolerationSeconds of the tolerations that match it; a match without
// tolerationSeconds tolerates that taint for ever. A taint counts from the later of its
// timeAdded and since, the moment this hub began to watch (a leader's start): a hub that
// was itself cut off, or restarted, gives every cluster a fresh tolerationSeconds rather
// than evicting everything it finds tainted.
func EvictAt(tolerations []corev1.Toleration, taints []corev1.Taint, since time.Time) Eviction {
	return evictAt(tolerations, taints, since, 0)
}

// evictAt is EvictAt with the unreachable taint tolerated for minUnreachable at least.
func evictAt(tolerations []corev1.Toleration, taints []corev1.Taint, since time.Time, minUnreachable time.Duration) Eviction {
	var out Eviction
	for i := range taints {
		t := &taints[i]
		if t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		wait, forever := tolerated(tolerations, t)
		if forever || t.TimeAdded == nil {
			// A taint without timeAdded is not counted until the hub has stamped it: from
			// the leader's start it could be long due the instant it appears.
			continue
		}
		if t.Key == musterv1.UnreachableTaintKey {
			wait = max(wait, minUnreachable)
		}
		at := later(t.TimeAdded, since).Add(wait)
		if out.At.IsZero() || at.Before(out.At) {
			out = Eviction{At: at, Taint: *t}
		}
	}
	return out
}

// tolerated returns how long tolerations tolerate taint: the shortest tolerationSeconds
// of those that match it (none: zero), or forever when one matches without a limit.
func tolerated(tolerations []corev1.Toleration, taint *corev1.Taint) (time.Duration, bool) {
	var shortest time.Duration
	matched := false
	for i := range tolerations {
		tol := &tolerations[i]
		if !tol.ToleratesTaint(klog.Background(), taint, true) {
			continue
		}
		if tol.TolerationSeconds == nil {
			return 0, true
		}
		d := time.Duration(max(*tol.TolerationSeconds, 0)) * time.Second
		if !matched || d < shortest {
			shortest, matched = d, true
		}
	}
	return shortest, false
}

// DefaultDisruptionThreshold is the share of a placement's clusters that may be
// unreachable at once while work still moves off them: above it the hub takes the
// outage for its own (a partition of the hub, a region's network) and moves nothing, as
// the node lifecycle controller stops evicting in a zone that is mostly down.
const DefaultDisruptionThreshold = 0.55

// Disrupted says whether more than threshold of the clusters placement selects (by
// affinity; accepted and not leaving) are unreachable, and the counts for the message. A
// cluster is unreachable when it carries the unreachable taint, or when quiet (nil: never)
// says its agent has gone quiet without being tainted yet: the hub taints each cluster at
// its own last renewal plus the grace period, so when the hub itself is cut off the taints
// come one by one over a heartbeat interval, and counting taints alone would let the
// first ones move their work while the gate still saw one cluster of many down. A
// placement that selects no cluster is not disrupted.
func Disrupted(placement *musterv1.Placement, members []musterv1.MemberCluster, threshold float64, quiet func(cluster string) bool) (bool, int, int) {
	selected, unreachable := 0, 0
	for i := range members {
		mc := &members[i]
		if !selects(placement, mc) {
			continue
		}
		selected++
		if hasUnreachableTaint(mc) || (quiet != nil && quiet(mc.Name)) {
			unreachable++
		}
	}
	return selected > 0 && float64(unreachable) > threshold*float64(selected), unreachable, selected
}

// selects says whether placement's affinity picks mc among the accepted clusters that are
// not leaving, whatever their taints and health.
func selects(placement *musterv1.Placement, mc *musterv1.MemberCluster) bool {
	reason, _ := Check(placement, mc)
	return reason == "" || reason == UntoleratedTaint || reason == NotAvailable
}

func hasUnreachableTaint(mc *musterv1.MemberCluster) bool {
	for _, t := range mc.Spec.Taints {
		if t.Key == musterv1.UnreachableTaintKey {
			return true
		}
	}
	return false
}

// later returns the later of a and b; a nil a is b.
func later(a *metav1.Time, b time.Time) time.Time {
	if a != nil && a.After(b) {
		return a.Time
	}
	return b
}

// EvictionPolicy is what the hub brings to an eviction decision: Since, when this hub
// began to watch (no taint counts from before), and the toleration of the unreachable
// taint a placement without one gets.
type EvictionPolicy struct {
	Since                        time.Time
	UnreachableTolerationSeconds int64
	// MinUnreachableToleration, when set, is the least time work stays on an unreachable
	// cluster whatever its tolerations say: fenced work's (see Fencing.Plan).
	MinUnreachableToleration time.Duration
	// Fencing is the hub's, for ForFence.
	Fencing Fencing
}

// ForFence is p for work whose agent stops it after the fence after (none: zero): it is
// moved no sooner than the margin after that, whatever its tolerations or the hub's flags
// became since it was placed.
func (p EvictionPolicy) ForFence(after time.Duration) EvictionPolicy {
	if after > 0 {
		p.MinUnreachableToleration = max(p.MinUnreachableToleration, p.Fencing.Tolerate(after))
	}
	return p
}

// EvictAt is EvictAt for work placed under tolerations, with the default toleration of
// the unreachable taint added when none of them matches it.
func (p EvictionPolicy) EvictAt(tolerations []corev1.Toleration, taints []corev1.Taint) Eviction {
	withDefault, _ := WithDefaultToleration(slices.Clone(tolerations), p.UnreachableTolerationSeconds, math.MaxInt)
	return evictAt(withDefault, taints, p.Since, p.MinUnreachableToleration)
}

// UnreachableToleration is how long work placed under tolerations stays on an unreachable
// cluster, the default toleration added when none matches the taint; false: for ever.
func (p EvictionPolicy) UnreachableToleration(tolerations []corev1.Toleration) (time.Duration, bool) {
	withDefault, _ := WithDefaultToleration(slices.Clone(tolerations), p.UnreachableTolerationSeconds, math.MaxInt)
	wait, forever := tolerated(withDefault, &unreachableNoExecute)
	return wait, !forever
}

// unreachableNoExecute is the taint the hub puts on a member cluster whose agent stopped
// renewing its lease, with the effect that moves work.
var unreachableNoExecute = corev1.Taint{Key: musterv1.UnreachableTaintKey, Effect: corev1.TaintEffectNoExecute}

// WithDefaultToleration returns tolerations with muster.dev/unreachable:NoExecute
// tolerated for seconds added, as kube-apiserver's DefaultTolerationSeconds adds one to
// pods, and whether it added it: nothing is added when a toleration already matches the
// taint (the user chose) or when the list is full (max entries).
func WithDefaultToleration(tolerations []corev1.Toleration, seconds int64, maxEntries int) ([]corev1.Toleration, bool) {
	for i := range tolerations {
		if tolerations[i].ToleratesTaint(klog.Background(), &unreachableNoExecute, true) {
			return tolerations, false
		}
	}
	if len(tolerations) >= maxEntries {
		return tolerations, false
	}
	return append(tolerations, corev1.Toleration{
		Key: musterv1.UnreachableTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &seconds,
	}), true
}
