package main

import (
	"fmt"
	"io"
	"time"

	"github.com/musterhq/muster/e2e/benchstat"
)

// median is the median of each figure over runs, each taken on its own.
func median(runs []runResult) runResult {
	of := func(v func(runResult) float64) float64 { return benchstat.Median(runs, v) }
	dur := func(v func(runResult) time.Duration) time.Duration {
		return time.Duration(of(func(r runResult) float64 { return float64(v(r)) }))
	}
	return runResult{
		side:      runs[0].side,
		created:   dur(func(r runResult) time.Duration { return r.created }),
		bound:     dur(func(r runResult) time.Duration { return r.bound }),
		succeeded: dur(func(r runResult) time.Duration { return r.succeeded }),
		complete:  dur(func(r runResult) time.Duration { return r.complete }),
		cpu:       dur(func(r runResult) time.Duration { return r.cpu }),
		writes: writeCounts{
			jobs:   of(func(r runResult) float64 { return r.writes.jobs }),
			pods:   of(func(r runResult) float64 { return r.writes.pods }),
			events: of(func(r runResult) float64 { return r.writes.events }),
		},
	}
}

const rowFormat = "%-18s %4s %12s %10s %14s %13s %8s %6s %6s %7s %7s\n"

func header(w io.Writer) {
	fmt.Fprintf(w, rowFormat, "SIDE", "RUN", "CREATED (s)", "BOUND (s)", "SUCCEEDED (s)", "COMPLETE (s)", "CPU (s)", "JOBS", "PODS", "EVENTS", "WRITES")
}

func row(w io.Writer, run string, r runResult) {
	fmt.Fprintf(w, rowFormat, r.side, run,
		fmt.Sprintf("%.2f", r.created.Seconds()), fmt.Sprintf("%.2f", r.bound.Seconds()), fmt.Sprintf("%.2f", r.succeeded.Seconds()), fmt.Sprintf("%.2f", r.complete.Seconds()),
		fmt.Sprintf("%.2f", r.cpu.Seconds()),
		fmt.Sprintf("%.0f", r.writes.jobs), fmt.Sprintf("%.0f", r.writes.pods), fmt.Sprintf("%.0f", r.writes.events), fmt.Sprintf("%.0f", r.writes.total()))
}

// report prints every run, each side's medians and, for each peer, the ratio lines
// `ratio <scenario> muster/<peer> <figure>=<value>`; bySide holds muster's runs first.
func report(w io.Writer, scenario string, bySide [][]runResult) {
	fmt.Fprintln(w, "\nevery run")
	header(w)
	for _, runs := range bySide {
		for _, r := range runs {
			row(w, fmt.Sprint(r.run), r)
		}
	}
	fmt.Fprintf(w, "\nmedians of %d runs\n", len(bySide[0]))
	header(w)
	medians := make([]runResult, len(bySide))
	for i, runs := range bySide {
		medians[i] = median(runs)
		row(w, "-", medians[i])
	}
	fmt.Fprintln(w)
	for _, line := range ratioLines(scenario, medians[0], medians[1:]) {
		fmt.Fprintln(w, line)
	}
}

// ratioLines compares muster's medians with each peer's: below 1 is muster ahead.
func ratioLines(scenario string, muster runResult, peers []runResult) []string {
	var lines []string
	for _, p := range peers {
		for _, f := range []struct {
			name      string
			mine, its float64
		}{
			{"complete", muster.complete.Seconds(), p.complete.Seconds()},
			{"created", muster.created.Seconds(), p.created.Seconds()},
			{"bound", muster.bound.Seconds(), p.bound.Seconds()},
			{"writes", muster.writes.total(), p.writes.total()},
			{"cpu", muster.cpu.Seconds(), p.cpu.Seconds()},
		} {
			lines = append(lines, fmt.Sprintf("ratio %s muster/%s %s=%.2f", scenario, p.side, f.name, f.mine/f.its))
		}
	}
	return lines
}
