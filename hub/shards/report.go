package shards

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// MaxMessage caps a condition message that joins the members' messages: kubectl shows it
// whole, and a fleet of refusing clusters must not grow the owner's status without bound.
const MaxMessage = 1024

// Report is what one shard's Work and fed-back status say, as the owner's conditions
// need it.
type Report struct {
	// Where names the shard in messages: "cluster member1", "subset a in cluster member1".
	Where string
	// Applied is true once the agent applied the shard's manifest.
	Applied bool
	// ApplyError is the member's refusal of the manifest (its API server's message); empty
	// when none was reported.
	ApplyError string
	// Unschedulable is the scheduler's word on the shard's pods that wait for a node;
	// empty when none waits.
	Unschedulable string
}

// ApplyState reads what a Work's agent reported about applying it: applied once every
// manifest is Applied=True (or fed back a status, which only an existing object has),
// and the member's message when a manifest, or the whole Work, is Applied=False.
func ApplyState(w *musterv1.Work) (applied bool, failure string) {
	var failures []string
	reported := 0
	for _, m := range w.Status.Manifests {
		c := meta.FindStatusCondition(m.Conditions, musterv1.WorkApplied)
		switch {
		case c != nil && c.Status == metav1.ConditionFalse:
			failures = append(failures, c.Message)
		case c != nil && c.Status == metav1.ConditionTrue, m.Status != nil && len(m.Status.Raw) > 0:
			reported++
		}
	}
	if len(failures) > 0 {
		return false, strings.Join(failures, "; ")
	}
	if c := meta.FindStatusCondition(w.Status.Conditions, musterv1.WorkApplied); c != nil && c.Status == metav1.ConditionFalse && len(w.Status.Manifests) == 0 {
		// The agent could not get as far as a manifest (it failed on the Work itself).
		return false, c.Message
	}
	return len(w.Spec.Manifests) > 0 && reported >= len(w.Spec.Manifests), ""
}

// Join joins "where: message" entries with "; " into at most MaxMessage bytes. Entries
// that do not fit are counted as "and N more"; a first entry too long on its own is cut.
// shown is how many entries the message holds whole or cut.
func Join(entries []string) (msg string, shown int) {
	var b strings.Builder
	for i, e := range entries {
		sep := ""
		if i > 0 {
			sep = "; "
		}
		// Leave room for the longest tail this list could need.
		tail := len(fmt.Sprintf("; and %d more", len(entries)-i-1))
		if i == len(entries)-1 {
			tail = 0
		}
		if b.Len()+len(sep)+len(e)+tail > MaxMessage {
			if i == 0 {
				b.WriteString(cut(e, MaxMessage-len("…")-tail))
				b.WriteString("…")
				shown = 1
			}
			if rest := len(entries) - shown; rest > 0 {
				fmt.Fprintf(&b, "; and %d more", rest)
			}
			return b.String(), shown
		}
		b.WriteString(sep)
		b.WriteString(e)
		shown++
	}
	return b.String(), shown
}

// cut shortens s to at most n bytes without splitting a character.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// AppliedCondition decides the owner's ShardsApplied condition (of type condType) from its
// shards: False with every member's refusal, True once every shard was applied, Unknown
// while an agent has not reported. news is true when the condition reports a refusal that
// prev did not, so it is announced (event and log) once, not on every status report.
func AppliedCondition(condType string, prev *metav1.Condition, reports []Report, generation int64) (c metav1.Condition, news bool) {
	var failed, waiting []string
	for _, r := range reports {
		switch {
		case r.ApplyError != "":
			failed = append(failed, r.Where+": "+r.ApplyError)
		case !r.Applied:
			waiting = append(waiting, r.Where)
		}
	}
	c = metav1.Condition{Type: condType, ObservedGeneration: generation}
	switch {
	case len(failed) > 0:
		msg, shown := Join(failed)
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, musterv1.ReasonApplyFailed, msg
		return c, !sameProblem(prev, c, failed[:shown])
	case len(waiting) > 0:
		msg, _ := Join(waiting)
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, musterv1.ReasonApplying, "waiting for the agent to apply the shard in "+msg
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, musterv1.ReasonApplied, fmt.Sprintf("the member clusters applied every shard (%d)", len(reports))
	}
	return c, false
}

// SchedulableCondition decides the owner's PodsSchedulable condition (of type condType):
// False with the scheduler's words while pods of some shard wait for a node, True once
// none does. It is nil while no pod ever waited, so a healthy job is not cluttered. news
// is true when a shard that was not waiting before starts to: the scheduler's message
// changes with every pod it counts, so only a new shard is news.
func SchedulableCondition(condType string, prev *metav1.Condition, reports []Report, generation int64) (c *metav1.Condition, news bool) {
	var waiting, where []string
	for _, r := range reports {
		if r.Unschedulable != "" {
			waiting = append(waiting, r.Where+": "+r.Unschedulable)
			where = append(where, r.Where+": ")
		}
	}
	if len(waiting) == 0 {
		if prev == nil {
			return nil, false
		}
		return &metav1.Condition{Type: condType, Status: metav1.ConditionTrue, Reason: musterv1.ReasonSchedulable, Message: "no pod waits for a node", ObservedGeneration: generation}, false
	}
	msg, shown := Join(waiting)
	c = &metav1.Condition{Type: condType, Status: metav1.ConditionFalse, Reason: musterv1.ReasonUnschedulable, Message: msg, ObservedGeneration: generation}
	return c, !sameProblem(prev, *c, where[:shown])
}

// sameProblem: prev already reported c's problem, with each of the given entries (or
// entry prefixes) in its message.
func sameProblem(prev *metav1.Condition, c metav1.Condition, entries []string) bool {
	if prev == nil || prev.Status != c.Status || prev.Reason != c.Reason {
		return false
	}
	if prev.Message == c.Message {
		return true
	}
	return !slices.ContainsFunc(entries, func(e string) bool { return !strings.Contains("; "+prev.Message, "; "+e) })
}
