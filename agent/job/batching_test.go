package job

import (
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
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
		want        time.Duration
	}{
		{name: "a change on its own is handled once it stays alone for Quiet", b: b, previous: never, want: ms(100)},
		{name: "a burst is handled Quiet after its last change", b: b, previous: never, last: ms(450), want: ms(550)},
		{name: "a stream that does not pause is handled Period after its first change", b: b, previous: never, last: ms(950), want: time.Second},
		{name: "a change just before the deadline does not move it", b: b, previous: never, first: ms(200), last: ms(1150), want: ms(1200)},
		{name: "a change soon after one round is handled after Quiet", b: b, previous: [2]time.Duration{ms(-100), -time.Hour}, want: ms(100)},
		{name: "a change soon after two rounds waits a Period from the first", b: b, previous: [2]time.Duration{ms(-100), ms(-300)}, want: ms(700)},
		{name: "a change a Period after two rounds is handled after Quiet", b: b, previous: [2]time.Duration{ms(-500), ms(-1000)}, want: ms(100)},
		{name: "with Quiet equal to Period, every change waits Period, as upstream", b: batching{Period: time.Second, Quiet: time.Second}, previous: never, first: ms(300), last: ms(300), want: ms(1300)},
		{name: "a Quiet longer than Period is capped by it", b: batching{Period: ms(500), Quiet: time.Second}, previous: never, last: ms(100), want: ms(500)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			previous := [2]time.Time{t0.Add(tc.previous[0]), t0.Add(tc.previous[1])}
			got := tc.b.roundAt(jobRounds{previous: previous, first: t0.Add(tc.first), last: t0.Add(tc.last), pending: true})
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

	b.changed(alone, q)
	// The burst and the stream change every 10ms, for 100ms and 500ms; the trickle every
	// 60ms for 500ms.
	for i := 0; i < 50; i++ {
		if i < 10 {
			b.changed(burst, q)
		}
		if i%6 == 0 {
			b.changed(trickle, q)
		}
		b.changed(stream, q)
		time.Sleep(ms(10))
	}
	time.Sleep(ms(700))

	if got := q.of(alone); len(got) != 1 || got[0] > ms(250) {
		t.Errorf("a lone change was added at %v, want once, soon after Quiet", got)
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
