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
	for _, tc := range []struct {
		name        string
		b           batching
		first, last time.Duration
		want        time.Duration
	}{
		{name: "a change on its own is handled once it stays alone for Quiet", b: b, first: 0, last: 0, want: ms(100)},
		{name: "a burst is handled Quiet after its last change", b: b, first: 0, last: ms(450), want: ms(550)},
		{name: "a stream that does not pause is handled Period after its first change", b: b, first: 0, last: ms(950), want: time.Second},
		{name: "a change just before the deadline does not move it", b: b, first: ms(200), last: ms(1150), want: ms(1200)},
		{name: "with Quiet equal to Period, every change waits Period, as upstream", b: batching{Period: time.Second, Quiet: time.Second}, first: ms(300), last: ms(300), want: ms(1300)},
		{name: "a Quiet longer than Period is capped by it", b: batching{Period: ms(500), Quiet: time.Second}, first: 0, last: ms(100), want: ms(500)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.b.roundAt(pendingRound{first: t0.Add(tc.first), last: t0.Add(tc.last)})
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
// Jobs are batched apart, and it forgets a Job once its round is due.
func TestBatcherRounds(t *testing.T) {
	b := newBatcher(batching{Period: ms(300), Quiet: ms(40)}, time.Now)
	q := &addedAt{start: time.Now(), adds: map[reconcile.Request][]time.Duration{}}
	burst, stream, alone := request("burst"), request("stream"), request("alone")

	b.changed(alone, q)
	// Both change every 10ms: the burst for 100ms, the stream for 500ms.
	for i := 0; i < 50; i++ {
		if i < 10 {
			b.changed(burst, q)
		}
		b.changed(stream, q)
		time.Sleep(ms(10))
	}
	time.Sleep(ms(400))

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
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pending) != 0 {
		t.Errorf("the batcher still holds %d Jobs after their rounds", len(b.pending))
	}
}
