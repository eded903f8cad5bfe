package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/musterhq/muster/e2e/benchstat"
)

// result is one run of one side: its children's lag percentiles.
type result struct {
	run           int
	children      int
	p50, p99, max time.Duration
}

// summarize takes the lag of each child seen; a child that never came counts as the
// longest lag measured, so that a run missing children cannot look faster.
func (r *result) summarize(seen []sighting, want int) {
	lags := make([]time.Duration, 0, max(len(seen), want))
	for _, s := range seen {
		lags = append(lags, s.seen.Sub(s.slot))
	}
	r.children = len(lags)
	slices.Sort(lags)
	if len(lags) == 0 {
		return
	}
	for len(lags) < want {
		lags = append(lags, lags[len(lags)-1])
	}
	r.p50, r.p99, r.max = percentile(lags, 50), percentile(lags, 99), lags[len(lags)-1]
}

// report prints each side's medians over its runs and the ratio lines: the last two are
// for the hub's first worker count.
func report(sides []side, results map[side][]result, o options) error {
	fmt.Printf("\nmedians of %d runs (%d crons, %d slot(s) a run)\n%-26s %12s %10s %10s %10s\n", o.runs, o.crons, o.slots, "CONTROLLER", "CHILDREN", "P50 (ms)", "P99 (ms)", "MAX (ms)")
	medians := map[side]result{}
	for _, s := range sides {
		runs := results[s]
		for _, r := range runs {
			if r.children == 0 {
				return fmt.Errorf("run %d of %s created no child in the measured slots", r.run, s)
			}
		}
		m := result{
			children: int(median(runs, func(r result) float64 { return float64(r.children) })),
			p50:      time.Duration(median(runs, func(r result) float64 { return float64(r.p50) })),
			p99:      time.Duration(median(runs, func(r result) float64 { return float64(r.p99) })),
			max:      time.Duration(median(runs, func(r result) float64 { return float64(r.max) })),
		}
		medians[s] = m
		fmt.Printf("%-26s %5d/%-6d %10.0f %10.0f %10.0f\n", s, m.children, o.crons*o.slots, ms(m.p50), ms(m.p99), ms(m.max))
	}
	k := medians[sides[0]]
	scenario := fmt.Sprintf("cronjob-%d", o.crons)
	for _, s := range slices.Backward(sides[1:]) {
		h := medians[s]
		fmt.Printf("%s %d workers: p99 muster=%.3fs kube-controller-manager=%.3fs, ratio p99=%.2f p50=%.2f\n",
			scenario, s.workers, h.p99.Seconds(), k.p99.Seconds(), ms(h.p99)/ms(k.p99), ms(h.p50)/ms(k.p50))
	}
	h := medians[sides[1]]
	fmt.Printf("ratio %s muster/kube-controller-manager p99=%.2f\n", scenario, ms(h.p99)/ms(k.p99))
	fmt.Printf("ratio %s muster/kube-controller-manager p50=%.2f\n", scenario, ms(h.p50)/ms(k.p50))
	// The line `make bench-scale` collects with its own scenarios' (issue 31's crons).
	fmt.Printf("scale crons crons=%d runs=%d children=%d/%d muster-p50=%s muster-p99=%s kube-controller-manager-children=%d/%d kube-controller-manager-p50=%s kube-controller-manager-p99=%s ratio-p99=%.2f ratio-p50=%.2f%s\n",
		o.crons, o.runs, h.children, o.crons*o.slots, h.p50.Round(time.Millisecond), h.p99.Round(time.Millisecond),
		k.children, o.crons*o.slots, k.p50.Round(time.Millisecond), k.p99.Round(time.Millisecond), ms(h.p99)/ms(k.p99), ms(h.p50)/ms(k.p50), cronGoal(o.crons))
	return nil
}

// median is the median of one figure over the runs.
func median(runs []result, figure func(result) float64) float64 {
	return benchstat.Median(runs, figure)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p int) time.Duration { return benchstat.Percentile(sorted, p) }

// cronGoal names the goal issue 31 sets for a burst of this size, if any: a child within
// 1 s of its slot at P99 for 500 crons; 5,000 has only the ratio.
func cronGoal(crons int) string {
	if crons <= 500 {
		return " goal-p99=1s"
	}
	return ""
}
