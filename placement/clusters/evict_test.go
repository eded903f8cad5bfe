package clusters

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestEvictAtFollowsTheTaintManagersRules(t *testing.T) {
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	added := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: start.Add(d)} }
	unreachable := corev1.Taint{Key: musterv1.UnreachableTaintKey, Effect: corev1.TaintEffectNoExecute, TimeAdded: added(time.Minute)}
	maintenance := corev1.Taint{Key: "maintenance", Value: "drain", Effect: corev1.TaintEffectNoExecute, TimeAdded: added(2 * time.Minute)}
	tolerateUnreachable := func(seconds *int64) corev1.Toleration {
		return corev1.Toleration{Key: musterv1.UnreachableTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds}
	}
	for _, c := range []struct {
		name        string
		tolerations []corev1.Toleration
		taints      []corev1.Taint
		since       time.Time
		want        time.Time // zero: never
	}{
		{name: "no taint", since: start},
		{name: "only NoSchedule", taints: []corev1.Taint{{Key: musterv1.UnreachableTaintKey, Effect: corev1.TaintEffectNoSchedule, TimeAdded: added(0)}}, since: start},
		{name: "untolerated NoExecute evicts when added", taints: []corev1.Taint{unreachable}, since: start, want: start.Add(time.Minute)},
		{name: "tolerated for 300s", tolerations: []corev1.Toleration{tolerateUnreachable(ptr.To[int64](300))}, taints: []corev1.Taint{unreachable}, since: start,
			want: start.Add(6 * time.Minute)},
		{name: "tolerated without seconds: never", tolerations: []corev1.Toleration{tolerateUnreachable(nil)}, taints: []corev1.Taint{unreachable}, since: start},
		{name: "a limited and an unlimited match: never", tolerations: []corev1.Toleration{tolerateUnreachable(ptr.To[int64](5)), tolerateUnreachable(nil)},
			taints: []corev1.Taint{unreachable}, since: start},
		{name: "the shortest of two matches", tolerations: []corev1.Toleration{tolerateUnreachable(ptr.To[int64](300)), tolerateUnreachable(ptr.To[int64](30))},
			taints: []corev1.Taint{unreachable}, since: start, want: start.Add(90 * time.Second)},
		{name: "negative seconds evict at once", tolerations: []corev1.Toleration{tolerateUnreachable(ptr.To[int64](-5))}, taints: []corev1.Taint{unreachable}, since: start,
			want: start.Add(time.Minute)},
		{name: "an Exists toleration without key tolerates every taint for ever", tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			taints: []corev1.Taint{unreachable, maintenance}, since: start},
		{name: "the earliest taint decides", tolerations: []corev1.Toleration{tolerateUnreachable(ptr.To[int64](300))}, taints: []corev1.Taint{unreachable, maintenance},
			since: start, want: start.Add(2 * time.Minute)},
		{name: "a value toleration for another value does not match", tolerations: []corev1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpEqual, Value: "other"}},
			taints: []corev1.Taint{maintenance}, since: start, want: start.Add(2 * time.Minute)},
		{name: "a taint older than the hub's watch counts from the watch", tolerations: []corev1.Toleration{tolerateUnreachable(ptr.To[int64](300))},
			taints: []corev1.Taint{unreachable}, since: start.Add(time.Hour), want: start.Add(time.Hour + 5*time.Minute)},
		{name: "a taint without timeAdded waits for its stamp", taints: []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoExecute}},
			since: start.Add(time.Hour)},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := EvictAt(c.tolerations, c.taints, c.since)
			if !got.At.Equal(c.want) {
				t.Fatalf("EvictAt = %v (taint %s), want %v", got.At, got.Taint.ToString(), c.want)
			}
			if c.want.IsZero() {
				if got.Due(start.Add(1000 * time.Hour)) {
					t.Error("an eviction that never comes is due")
				}
				return
			}
			if got.Due(c.want.Add(-time.Nanosecond)) || !got.Due(c.want) {
				t.Errorf("Due does not turn at %v", c.want)
			}
		})
	}
}

func TestDisruptedStopsFailoverWhenMostSelectedClustersAreUnreachable(t *testing.T) {
	member := func(name string, unreachable bool, labels map[string]string) musterv1.MemberCluster {
		mc := musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: musterv1.MemberClusterSpec{Accepted: true}}
		if unreachable {
			mc.Spec.Taints = []corev1.Taint{{Key: musterv1.UnreachableTaintKey, Effect: corev1.TaintEffectNoExecute}}
		}
		return mc
	}
	west := map[string]string{"region": "west"}
	notAccepted := member("new", true, nil)
	notAccepted.Spec.Accepted = false
	fleet := []musterv1.MemberCluster{member("a", true, nil), member("b", false, nil), member("c", true, west), member("d", true, west), notAccepted}
	for _, c := range []struct {
		name      string
		placement *musterv1.Placement
		members   []musterv1.MemberCluster
		// quiet are the clusters whose agents went quiet, not tainted yet.
		quiet    []string
		want     bool
		down, of int
	}{
		{name: "3 of 4 selected are unreachable", members: fleet, want: true, down: 3, of: 4},
		{name: "1 of 2 named is unreachable", placement: &musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{"a", "b"}}},
			members: fleet, down: 1, of: 2},
		{name: "every selected one is unreachable", placement: &musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterSelector: &metav1.LabelSelector{MatchLabels: west}}},
			members: fleet, want: true, down: 2, of: 2},
		{name: "no member", members: nil},
		{name: "1 of 2 named is tainted, the other quiet: the hub may be cut off from both", placement: &musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{"a", "b"}}},
			members: fleet, quiet: []string{"b"}, want: true, down: 2, of: 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			quiet := func(name string) bool { return slices.Contains(c.quiet, name) }
			got, down, of := Disrupted(c.placement, c.members, DefaultDisruptionThreshold, quiet)
			if got != c.want || down != c.down || of != c.of {
				t.Errorf("Disrupted = %v (%d of %d), want %v (%d of %d)", got, down, of, c.want, c.down, c.of)
			}
		})
	}
}

func TestWithDefaultTolerationAddsOneOnlyWhereTheUserChoseNone(t *testing.T) {
	other := corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists}
	forever := corev1.Toleration{Key: musterv1.UnreachableTaintKey, Operator: corev1.TolerationOpExists}
	everything := corev1.Toleration{Operator: corev1.TolerationOpExists}
	for _, c := range []struct {
		name string
		in   []corev1.Toleration
		max  int
		want bool
	}{
		{name: "none", want: true, max: 32},
		{name: "an unrelated one", in: []corev1.Toleration{other}, want: true, max: 32},
		{name: "the user's own, without seconds", in: []corev1.Toleration{forever}, max: 32},
		{name: "one that tolerates everything", in: []corev1.Toleration{everything}, max: 32},
		{name: "a full list", in: []corev1.Toleration{other}, max: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, added := WithDefaultToleration(slices.Clone(c.in), 300, c.max)
			if added != c.want {
				t.Fatalf("added = %v, want %v", added, c.want)
			}
			if !added {
				if len(got) != len(c.in) {
					t.Errorf("tolerations changed: %v", got)
				}
				return
			}
			last := got[len(got)-1]
			if len(got) != len(c.in)+1 || !last.ToleratesTaint(klog.Background(), &unreachableNoExecute, true) || ptr.Deref(last.TolerationSeconds, 0) != 300 {
				t.Errorf("tolerations %+v, want the input and unreachable:NoExecute for 300s", got)
			}
			taint := unreachableNoExecute
			taint.TimeAdded = &metav1.Time{Time: time.Unix(0, 0)}
			if e := EvictAt(got, []corev1.Taint{taint}, time.Unix(0, 0)); !e.At.Equal(time.Unix(300, 0)) {
				t.Errorf("with the default, an unreachable cluster evicts at %v, want after 300s", e.At)
			}
		})
	}
}
