package workloadspread

import (
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// DefaultUnschedulableWindow is how long an Adaptive spread keeps new pods off a subset
// whose pods could not be scheduled before trying it again: OpenKruise's fixed 5 minutes.
const DefaultUnschedulableWindow = 300 * time.Second

// Strategy is how a spread treats pods that wait for a node.
type Strategy struct {
	// Adaptive: pods that waited Critical move to later subsets, and the subset gets no
	// new ones for Window.
	Adaptive         bool
	Critical, Window time.Duration
}

// StrategyOf reads the spread's strategy; window is the hub's unschedulable window.
// rescheduleCriticalSeconds 0 turns rescheduling off, as in OpenKruise: the spread then
// acts as Fixed, reporting waiting pods and moving none (it does not mean "move at the
// first pod that waits").
func StrategyOf(ws *musterv1.WorkloadSpread, window time.Duration) Strategy {
	st := Strategy{Adaptive: ws.Spec.ScheduleStrategy.Type == musterv1.ScheduleAdaptive, Critical: 30 * time.Second, Window: window}
	if a := ws.Spec.ScheduleStrategy.Adaptive; a != nil && a.RescheduleCriticalSeconds != nil {
		st.Critical = time.Duration(*a.RescheduleCriticalSeconds) * time.Second
	}
	st.Adaptive = st.Adaptive && st.Critical > 0
	return st
}

// Shard is what the Schedulable decision reads of one of a subset's shards: how messages
// name it, and the Job status its agent reported (nil before the first report).
type Shard struct {
	Describe string
	Status   *batchv1.JobStatus
}

// Schedulable decides a subset's Schedulable condition from its previous one (prev, nil
// if none) and its shards, and how long until it may change (zero for never). A Fixed
// spread only reports pods that wait for a node. An Adaptive one turns False once a pod
// waited Critical and stays False for Window, whatever the pods do meanwhile; then the
// subset is tried again.
func Schedulable(prev *metav1.Condition, shards []Shard, strategy Strategy, now time.Time) (metav1.Condition, time.Duration) {
	var since time.Time
	var message string
	for _, s := range shards {
		if c := WaitingCondition(s.Status); c != nil && (since.IsZero() || c.LastTransitionTime.Time.Before(since)) {
			since, message = c.LastTransitionTime.Time, fmt.Sprintf("%s: %s", s.Describe, c.Message)
		}
	}
	ok := metav1.Condition{Type: musterv1.SubsetSchedulable, Status: metav1.ConditionTrue, Reason: musterv1.ReasonSchedulable, Message: "no pod waits for a node longer than allowed", LastTransitionTime: metav1.NewTime(now)}
	if prev != nil && prev.Status == metav1.ConditionTrue {
		ok.LastTransitionTime = prev.LastTransitionTime
	}
	if !strategy.Adaptive {
		if since.IsZero() {
			return ok, 0
		}
		return metav1.Condition{Type: musterv1.SubsetSchedulable, Status: metav1.ConditionFalse, Reason: musterv1.WorkloadSpreadReasonPodUnschedulable, Message: message, LastTransitionTime: metav1.NewTime(since)}, 0
	}
	if prev != nil && prev.Status == metav1.ConditionFalse && prev.Reason == musterv1.WorkloadSpreadReasonPodUnschedulable {
		if end := prev.LastTransitionTime.Add(strategy.Window); now.Before(end) {
			return *prev, end.Sub(now)
		}
	}
	if since.IsZero() {
		return ok, 0
	}
	if waited := now.Sub(since); waited < strategy.Critical {
		return ok, strategy.Critical - waited
	}
	return metav1.Condition{
		Type: musterv1.SubsetSchedulable, Status: metav1.ConditionFalse, Reason: musterv1.WorkloadSpreadReasonPodUnschedulable, LastTransitionTime: metav1.NewTime(now),
		Message: fmt.Sprintf("pods waited more than %s for a node (%s); new pods go to later subsets until %s",
			strategy.Critical, message, now.Add(strategy.Window).UTC().Format(time.RFC3339)),
	}, storedWindow(now, strategy.Window)
}

// storedWindow is how long from now a window marked at now lasts as stored: a condition's
// lastTransitionTime keeps whole seconds, and the FleetJob controller, which reads the
// stored one, takes the subset back at that second's end of the window; waking then, not
// up to a second later, leaves it no round in which to place new pods on a subset whose
// pods still wait.
func storedWindow(now time.Time, window time.Duration) time.Duration {
	return now.Truncate(time.Second).Add(window).Sub(now)
}

// WaitingCondition is the Job's True PodsUnschedulable condition, if any.
func WaitingCondition(status *batchv1.JobStatus) *batchv1.JobCondition {
	if status == nil {
		return nil
	}
	for i := range status.Conditions {
		if c := &status.Conditions[i]; c.Type == musterv1.JobPodsUnschedulable && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

// SubsetSummary is the status' one-line view of the subsets for `kubectl get`: each
// subset's replicas, and its cap (caps, in the same order; negative when unbounded) when it
// has one ("gpu 4/4, cpu 2"). The last subset may hold more than its cap ("cpu 6/2"): the
// replicas no cap admits run there.
func SubsetSummary(subsets []musterv1.WorkloadSpreadSubsetStatus, caps []int32) string {
	parts := make([]string, len(subsets))
	for i, s := range subsets {
		parts[i] = fmt.Sprintf("%s %d", s.Name, s.Replicas)
		if caps[i] >= 0 {
			parts[i] += fmt.Sprintf("/%d", caps[i])
		}
	}
	return strings.Join(parts, ", ")
}
