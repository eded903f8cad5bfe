package job

import (
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestRoundAt(t *testing.T) {
	b := batching{Period: time.Second, Quiet: ms(100)}
	never := [2]time.Duration{-time.Hour, -time.Hour} // no rounds for long
	for _, tc := range []struct {
		name        string
		b           batching
		previous    [2]time.Duration
		first, last time.Duration
		// countersOnly: no pending change settles a pod.
		countersOnly bool
		want         time.Duration
	}{
		{name: "a change on its own is handled once it stays alone for Quiet", b: b, previous: never, want: ms(100)},
		{name: "a burst is handled Quiet after its last change", b: b, previous: never, last: ms(450), want: ms(550)},
		{name: "a stream that does not pause is handled Period after its first change", b: b, previous: never, last: ms(950), want: time.Second},
		{name: "a change just before the deadline does not move it", b: b, previous: never, first: ms(200), last: ms(1150), want: ms(1200)},
		{name: "changes that only move counters wait Period", b: b, previous: never, first: ms(100), countersOnly: true, want: ms(1100)},
		{name: "a change soon after one round is handled after Quiet", b: b, previous: [2]time.Duration{ms(-100), -time.Hour}, want: ms(100)},
		{name: "a change soon after two rounds waits a Period from the first", b: b, previous: [2]time.Duration{ms(-100), ms(-300)}, want: ms(700)},
		{name: "a change a Period after two rounds is handled after Quiet", b: b, previous: [2]time.Duration{ms(-500), ms(-1000)}, want: ms(100)},
		{name: "with Quiet equal to Period, every change waits Period, as upstream", b: batching{Period: time.Second, Quiet: time.Second}, previous: never, first: ms(300), last: ms(300), want: ms(1300)},
		{name: "a Quiet longer than Period is capped by it", b: batching{Period: ms(500), Quiet: time.Second}, previous: never, last: ms(100), want: ms(500)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			previous := [2]time.Time{t0.Add(tc.previous[0]), t0.Add(tc.previous[1])}
			got := tc.b.roundAt(jobRounds{previous: previous, first: t0.Add(tc.first), last: t0.Add(tc.last), pending: true, settling: !tc.countersOnly})
			if want := t0.Add(tc.want); !got.Equal(want) {
				t.Errorf("roundAt = +%v, want +%v", got.Sub(t0), tc.want)
			}
		})
	}
}

// addedAt records when each Job was added.
type addedAt struct {
	mu    sync.Mutex
	start time.Time
	adds  map[reconcile.Request][]time.Duration
}

func (q *addedAt) Add(r reconcile.Request) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.adds[r] = append(q.adds[r], time.Since(q.start))
}

func (q *addedAt) of(r reconcile.Request) []time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.adds[r]
}

func request(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
}

// The batcher on real timers: a burst is one round, a steady stream one round per Period,
// changes trickling in just over Quiet apart get at most two rounds per Period, Jobs are
// batched apart, and it forgets a Job once its rounds are over.
func TestBatcherRounds(t *testing.T) {
	b := newBatcher(batching{Period: ms(300), Quiet: ms(40)}, time.Now)
	q := &addedAt{start: time.Now(), adds: map[reconcile.Request][]time.Duration{}}
	burst, stream, trickle, alone := request("burst"), request("stream"), request("trickle"), request("alone")

	lazy, woken := request("lazy"), request("woken")
	b.changed(alone, true, q)
	b.changed(lazy, false, q)
	b.changed(woken, false, q)
	// The burst and the stream change every 10ms, for 100ms and 500ms; the trickle every
	// 60ms for 500ms.
	for i := 0; i < 50; i++ {
		if i < 10 {
			b.changed(burst, true, q)
			b.changed(lazy, false, q)
		}
		if i == 5 {
			b.changed(woken, true, q)
		}
		if i%6 == 0 {
			b.changed(trickle, true, q)
		}
		b.changed(stream, true, q)
		time.Sleep(ms(10))
	}
	time.Sleep(ms(700))

	if got := q.of(alone); len(got) != 1 || got[0] > ms(250) {
		t.Errorf("a lone change was added at %v, want once, soon after Quiet", got)
	}
	if got := q.of(lazy); len(got) != 1 || got[0] < ms(300) {
		t.Errorf("changes that only move counters were added at %v, want once, after Period", got)
	}
	if got := q.of(woken); len(got) != 1 || got[0] > ms(250) {
		t.Errorf("a settling change after one that only moves counters was added at %v, want once, soon after Quiet", got)
	}
	if got := q.of(burst); len(got) != 1 {
		t.Errorf("a burst of 10 changes was added at %v, want once", got)
	}
	// 500ms of changes with no pause: a round at 300ms, the rest Quiet after they stop.
	if got := q.of(stream); len(got) != 2 || got[0] < ms(300) {
		t.Errorf("a stream of 500ms was added at %v, want twice, the first after Period", got)
	}
	// Nine changes 60ms apart, over 480ms: a round each without the bound; with it,
	// rounds at 40ms and 100ms, then none within a Period of the round before the last.
	got := q.of(trickle)
	t.Logf("trickle rounds at %v", got)
	if len(got) < 3 || len(got) > 6 {
		t.Errorf("a trickle of 9 changes 60ms apart was added at %v, want 3 to 6 times", got)
	}
	for i := 2; i < len(got); i++ {
		if got[i]-got[i-2] < ms(290) {
			t.Errorf("trickle rounds at %v: three within a Period", got)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.jobs) != 0 {
		t.Errorf("the batcher still holds %d Jobs after their rounds", len(b.jobs))
	}
}

func TestSettles(t *testing.T) {
	running := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Finalizers: []string{trackingFinalizer}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	with := func(mutate func(*corev1.Pod)) *corev1.Pod {
		p := running.DeepCopy()
		mutate(p)
		return p
	}
	succeeded := with(func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })
	for _, tc := range []struct {
		name     string
		old, new client.Object
		want     bool
	}{
		{name: "a pod that succeeds", old: running, new: succeeded, want: true},
		{name: "a pod that fails", old: running, new: with(func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }), want: true},
		{name: "a pod being deleted", old: running, new: with(func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: t0} }), want: true},
		{name: "a finished pod released", old: succeeded, new: with(func(p *corev1.Pod) { p.Status.Phase, p.Finalizers = corev1.PodSucceeded, nil }), want: true},
		{name: "a pod bound to a node", old: with(func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending }), new: with(func(p *corev1.Pod) { p.Status.Phase, p.Spec.NodeName = corev1.PodPending, "n" })},
		{name: "a pod that runs", old: with(func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending }), new: running},
		{name: "a pod that becomes ready", old: running, new: with(func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		})},
		{name: "a finished pod updated again", old: succeeded, new: with(func(p *corev1.Pod) { p.Status.Phase, p.Labels = corev1.PodSucceeded, map[string]string{"a": "b"} })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := settles(tc.old, tc.new); got != tc.want {
				t.Errorf("settles = %v, want %v", got, tc.want)
			}
		})
	}
}
