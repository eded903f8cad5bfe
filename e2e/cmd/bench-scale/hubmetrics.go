package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/musterhq/muster/e2e/framework"
)

// decisionTimes is the hub's muster_placement_decision_seconds histogram of one kind at
// one scrape: how many decisions it timed, their total, and the count at or under each
// bucket's upper bound.
type decisionTimes struct {
	count   uint64
	sum     float64
	buckets map[float64]uint64
}

// decisionsOf scrapes the hub's decision-time histogram of the kind placed.
func (b *bench) decisionsOf(ctx context.Context, kind string) (decisionTimes, error) {
	families, err := framework.Scrape(ctx, b.hubMetrics)
	if err != nil {
		return decisionTimes{}, fmt.Errorf("scraping the hub's metrics: %w", err)
	}
	d := decisionTimes{buckets: map[float64]uint64{}}
	family := families["muster_placement_decision_seconds"]
	if family == nil {
		return d, nil
	}
	for _, m := range family.GetMetric() {
		placed := ""
		for _, l := range m.GetLabel() {
			if l.GetName() == "kind" {
				placed = l.GetValue()
			}
		}
		if placed != kind || m.GetHistogram() == nil {
			continue
		}
		h := m.GetHistogram()
		d.count, d.sum = h.GetSampleCount(), h.GetSampleSum()
		for _, bucket := range h.GetBucket() {
			d.buckets[bucket.GetUpperBound()] = bucket.GetCumulativeCount()
		}
	}
	return d, nil
}

// meanSince is the mean time of the decisions timed since before.
func (d decisionTimes) meanSince(before decisionTimes) time.Duration {
	if d.count <= before.count {
		return 0
	}
	n := d.count - before.count
	return time.Duration((d.sum - before.sum) / float64(n) * float64(time.Second)).Round(time.Microsecond)
}

// slowestSince is the smallest bucket bound that holds every decision timed since
// before: the slowest of them took at most this long.
func (d decisionTimes) slowestSince(before decisionTimes) string {
	if d.count <= before.count {
		return "-"
	}
	n := d.count - before.count
	bound := math.Inf(1)
	for le, cumulative := range d.buckets {
		if cumulative-before.buckets[le] >= n && le < bound {
			bound = le
		}
	}
	if math.IsInf(bound, 1) {
		return "+Inf"
	}
	return time.Duration(bound * float64(time.Second)).String()
}

// queued is how many objects wait in the hub's work queues, over every controller.
func (b *bench) queued(ctx context.Context) (int, error) {
	families, err := framework.Scrape(ctx, b.hubMetrics)
	if err != nil {
		return 0, fmt.Errorf("scraping the hub's metrics: %w", err)
	}
	total := 0.0
	if family := families["workqueue_depth"]; family != nil {
		for _, m := range family.GetMetric() {
			total += m.GetGauge().GetValue()
		}
	}
	return int(total), nil
}
