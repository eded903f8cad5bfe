package clusters

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestFencingStopsTheAgentMarginBeforeTheHubMoves(t *testing.T) {
	for _, c := range []struct {
		name                      string
		fencing                   Fencing
		toleration                time.Duration
		wantAfter, wantToleration time.Duration
	}{
		{name: "defaults", fencing: Fencing{Grace: 40 * time.Second, Margin: DefaultFencingMargin}, toleration: 300 * time.Second,
			wantAfter: 280 * time.Second, wantToleration: 300 * time.Second},
		{name: "a short toleration is lengthened to leave the agent its minimum", fencing: Fencing{Grace: 40 * time.Second, Margin: DefaultFencingMargin},
			toleration: 5 * time.Second, wantAfter: MinFenceAfter, wantToleration: 40 * time.Second},
		{name: "zero toleration", fencing: Fencing{Grace: 40 * time.Second, Margin: 20 * time.Second},
			wantAfter: MinFenceAfter, wantToleration: 0},
		{name: "a margin below the grace period keeps the toleration", fencing: Fencing{Grace: 40 * time.Second, Margin: 20 * time.Second},
			toleration: 5 * time.Second, wantAfter: 25 * time.Second, wantToleration: 5 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			after, tolerate := c.fencing.Plan(c.toleration)
			if after != c.wantAfter || tolerate != c.wantToleration {
				t.Errorf("Plan(%s) = %s, %s; want %s, %s", c.toleration, after, tolerate, c.wantAfter, c.wantToleration)
			}
			// The property the plan exists for: the hub, tainting Grace after the last
			// renewal and moving the work tolerate after that, moves it Margin after
			// the agent stopped it at the earliest.
			if gap := c.fencing.Grace + tolerate - after; gap < c.fencing.Margin {
				t.Errorf("the hub moves the work %s after the agent stops it, less than the margin %s", gap, c.fencing.Margin)
			}
			if after < MinFenceAfter {
				t.Errorf("the agent stops the work after %s of silence, under %s", after, MinFenceAfter)
			}
			if got := c.fencing.Tolerate(after); got != tolerate {
				t.Errorf("Tolerate(%s) = %s; want the plan's own %s", after, got, tolerate)
			}
		})
	}
}

// TestTheMarginCoversThePodsGracePeriod: a pod that ignores SIGTERM runs for its whole
// termination grace period after its agent fences it; the hub must not start its
// replacement before then, so the margin grows with the grace period and the agent fences
// sooner.
func TestTheMarginCoversThePodsGracePeriod(t *testing.T) {
	hub := Fencing{Grace: 40 * time.Second, Margin: DefaultFencingMargin}
	for _, c := range []struct {
		grace, wantMargin, wantAfter time.Duration
	}{
		{grace: 0, wantMargin: DefaultFencingMargin, wantAfter: 280 * time.Second},
		{grace: 30 * time.Second, wantMargin: DefaultFencingMargin, wantAfter: 280 * time.Second},
		{grace: 120 * time.Second, wantMargin: 150 * time.Second, wantAfter: 190 * time.Second},
	} {
		f := hub.ForPods(c.grace)
		after, tolerate := f.Plan(300 * time.Second)
		if f.Margin != c.wantMargin || after != c.wantAfter {
			t.Errorf("pods of grace %s: margin %s, fence after %s; want %s, %s", c.grace, f.Margin, after, c.wantMargin, c.wantAfter)
		}
		// The pods stop by after+grace; the hub moves the work at Grace+tolerate, and
		// leaves the agent's slack (the hub's margin beyond a default pod's grace) besides.
		if moved, stopped := hub.Grace+tolerate, after+c.grace; moved-stopped < hub.Margin-30*time.Second {
			t.Errorf("pods of grace %s stop at %s, the hub moves their work at %s: too soon", c.grace, stopped, moved)
		}
	}
}

func TestTolerateHoldsToTheFenceAShardWasPlacedWith(t *testing.T) {
	placed := Fencing{Grace: 40 * time.Second, Margin: time.Minute}
	after, _ := placed.Plan(300 * time.Second)
	// The job's toleration was cut to 5 s since, and the margin raised.
	now := Fencing{Grace: 40 * time.Second, Margin: 2 * time.Minute}
	if got := now.Tolerate(after); placed.Grace+got-after < now.Margin {
		t.Errorf("Tolerate(%s) = %s: the hub would move the shard %s after its agent stops it, under the margin %s", after, got, placed.Grace+got-after, now.Margin)
	}
}

func TestMinUnreachableTolerationDelaysOnlyTheUnreachableTaint(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	unreachable := corev1.Taint{Key: musterv1.UnreachableTaintKey, Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: start}}
	drain := corev1.Taint{Key: "maintenance", Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: start}}
	tolerations := []corev1.Toleration{{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](5)}}
	p := EvictionPolicy{Since: start, UnreachableTolerationSeconds: 300, MinUnreachableToleration: time.Minute}
	if got := p.EvictAt(tolerations, []corev1.Taint{unreachable}).At; !got.Equal(start.Add(time.Minute)) {
		t.Errorf("unreachable for 5 s tolerated with a minimum of 1 m: evicted at %s, want %s", got, start.Add(time.Minute))
	}
	if got := p.EvictAt(tolerations, []corev1.Taint{drain}).At; !got.Equal(start.Add(5 * time.Second)) {
		t.Errorf("a drain taint is evicted at %s, want %s: the minimum is for the unreachable taint", got, start.Add(5*time.Second))
	}
	if d, ok := p.UnreachableToleration(nil); !ok || d != 300*time.Second {
		t.Errorf("UnreachableToleration(none) = %s, %v; want the default 300s", d, ok)
	}
	forever := []corev1.Toleration{{Key: musterv1.UnreachableTaintKey, Operator: corev1.TolerationOpExists}}
	if _, ok := p.UnreachableToleration(forever); ok {
		t.Error("a toleration without seconds tolerates for ever, not for a time")
	}
}
