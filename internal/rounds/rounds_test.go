package rounds

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

// t0 is the tables' clock: a fixed instant, so that waits are exact.
var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestRoundAt(t *testing.T) {
	b := Batching{Period: time.Second, Quiet: ms(100)}
	long := -time.Hour // no round for long
	for _, tc := range []struct {
		name                      string
		b                         Batching
		first, last, beforeLatest time.Duration
		want                      time.Duration
	}{
		{name: "a change on its own is handled once it stays alone for Quiet", b: b, beforeLatest: long, want: ms(100)},
		{name: "a burst is handled Quiet after its last change", b: b, beforeLatest: long, last: ms(450), want: ms(550)},
		{name: "a stream that does not pause is handled Period after its first change", b: b, beforeLatest: long, last: ms(950), want: time.Second},
		{name: "a change just before the deadline does not move it", b: b, beforeLatest: long, first: ms(200), last: ms(1150), want: ms(1200)},
		{name: "a change soon after two rounds waits a Period from the earlier", b: b, beforeLatest: ms(-300), want: ms(700)},
		{name: "a change a Period after the round before the latest is handled after Quiet", b: b, beforeLatest: ms(-1000), want: ms(100)},
		{name: "with Quiet equal to Period, every change waits Period, as upstream", b: Batching{Period: time.Second, Quiet: time.Second}, beforeLatest: long, first: ms(300), last: ms(300), want: ms(1300)},
		{name: "a Quiet longer than Period is capped by it", b: Batching{Period: ms(500), Quiet: time.Second}, beforeLatest: long, last: ms(100), want: ms(500)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.b.roundAt(t0.Add(tc.first), t0.Add(tc.last), t0.Add(tc.beforeLatest))
			if want := t0.Add(tc.want); !got.Equal(want) {
				t.Errorf("roundAt = +%v, want +%v", got.Sub(t0), tc.want)
			}
		})
	}
}

// An object's rounds on a clock the test moves: each step happens at its time (ms from the
// start), and the wait the queue is told, or finds when it takes the object, is checked.
func TestRounds(t *testing.T) {
	type step struct {
		at   int
		do   string // changed, urgent, take (the queue hands the object to a worker), forget
		wait int    // for changed: the wait until the round; for take: the wait left, 0 runs the round
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{name: "a lone change waits Quiet, then its round runs", steps: []step{
			{at: 0, do: "changed", wait: 100}, {at: 100, do: "take", wait: 0},
		}},
		{name: "a Job taken with nothing pending runs at once (its own requeue)", steps: []step{
			{at: 0, do: "take", wait: 0},
		}},
		{name: "a later change sends the object back to wait for the rest", steps: []step{
			{at: 0, do: "changed", wait: 100}, {at: 60, do: "changed", wait: 100},
			{at: 100, do: "take", wait: 60}, {at: 160, do: "take", wait: 0},
		}},
		{name: "a stream is handled Period after its first change", steps: []step{
			{at: 0, do: "changed", wait: 100}, {at: 90, do: "changed", wait: 100}, {at: 180, do: "changed", wait: 100},
			{at: 270, do: "changed", wait: 100}, {at: 900, do: "changed", wait: 100}, {at: 990, do: "changed", wait: 10},
			{at: 1000, do: "take", wait: 0},
		}},
		{name: "a third round within a Period waits for the Period to end", steps: []step{
			{at: 0, do: "changed", wait: 100}, {at: 100, do: "take", wait: 0},
			{at: 150, do: "changed", wait: 100}, {at: 250, do: "take", wait: 0},
			{at: 300, do: "changed", wait: 800}, {at: 400, do: "take", wait: 700}, {at: 1100, do: "take", wait: 0},
		}},
		{name: "changes during a round wait for the next one", steps: []step{
			{at: 0, do: "changed", wait: 100}, {at: 100, do: "take", wait: 0},
			{at: 120, do: "changed", wait: 100}, {at: 220, do: "take", wait: 0},
		}},
		{name: "an urgent change runs the pending round at once", steps: []step{
			{at: 0, do: "changed", wait: 100}, {at: 20, do: "urgent"}, {at: 20, do: "take", wait: 0},
			{at: 30, do: "changed", wait: 100}, {at: 30, do: "take", wait: 100},
		}},
		{name: "a forgotten Job starts afresh", steps: []step{
			{at: 0, do: "changed", wait: 100}, {at: 100, do: "take", wait: 0},
			{at: 150, do: "changed", wait: 100}, {at: 250, do: "take", wait: 0}, {at: 250, do: "forget"},
			{at: 300, do: "changed", wait: 100},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(t0)
			r := New(Batching{Period: time.Second, Quiet: ms(100)}, clk)
			key := types.NamespacedName{Namespace: "ns", Name: "j"}
			for _, s := range tc.steps {
				clk.SetTime(t0.Add(ms(s.at)))
				switch s.do {
				case "changed":
					if got := r.Changed(key); got != ms(s.wait) {
						t.Errorf("+%dms changed: wait %v, want %v", s.at, got, ms(s.wait))
					}
				case "urgent":
					r.Urgent(key)
				case "take":
					got := r.Wait(key)
					if got != ms(s.wait) {
						t.Errorf("+%dms taken: wait %v, want %v", s.at, got, ms(s.wait))
					}
					if got == 0 {
						r.Start(key)
					}
				case "forget":
					r.Forget(key)
				}
			}
		})
	}
}

// The rounds hold only the objects that are running: a Job forgotten once gone or finished
// leaves nothing behind.
func TestRoundsForgetJobs(t *testing.T) {
	r := New(Batching{Period: time.Second, Quiet: ms(100)}, clocktesting.NewFakePassiveClock(t0))
	for _, name := range []string{"a", "b"} {
		key := types.NamespacedName{Namespace: "ns", Name: name}
		r.Changed(key)
		r.Start(key)
		r.Forget(key)
	}
	if r.Len() != 0 {
		t.Errorf("the rounds hold %d Jobs after they were forgotten", r.Len())
	}
}

// A Quiet of zero means a fixed wait of Period after the first change, as upstream and as
// the BroadcastJob controller always did; the bound on two rounds per Period never holds
// such a round back.
func TestZeroQuietWaitsPeriodAfterTheFirstChange(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(t0)
	r := New(Batching{Period: ms(200)}, clk)
	key := types.NamespacedName{Namespace: "ns", Name: "j"}
	for _, s := range []struct{ at, want int }{{0, 200}, {50, 150}, {199, 1}} {
		clk.SetTime(t0.Add(ms(s.at)))
		if got := r.Changed(key); got != ms(s.want) {
			t.Errorf("+%dms changed: wait %v, want %v", s.at, got, ms(s.want))
		}
	}
	// Rounds in quick succession (the job's own changes, its nodes) do not hold the next
	// batch back beyond Period after its first change.
	for _, at := range []int{200, 210, 220} {
		clk.SetTime(t0.Add(ms(at)))
		r.Start(key)
	}
	clk.SetTime(t0.Add(ms(230)))
	if got := r.Changed(key); got != ms(200) {
		t.Errorf("a change after three rounds: wait %v, want 200ms", got)
	}
}
