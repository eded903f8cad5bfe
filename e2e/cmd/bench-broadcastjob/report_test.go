package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRatioLines(t *testing.T) {
	muster := runResult{side: "muster", created: 4 * time.Second, bound: 5 * time.Second, complete: 8 * time.Second,
		writes: writeCounts{jobs: 50, pods: 1000, events: 50}, cpu: 3 * time.Second}
	peer := runResult{side: "kruise-scheduler", created: 8 * time.Second, bound: 10 * time.Second, complete: 10 * time.Second,
		writes: writeCounts{jobs: 100, pods: 1000, events: 0}, cpu: 4 * time.Second}
	want := []string{
		"ratio broadcastjob-1000 muster/kruise-scheduler complete=0.80",
		"ratio broadcastjob-1000 muster/kruise-scheduler created=0.50",
		"ratio broadcastjob-1000 muster/kruise-scheduler bound=0.50",
		"ratio broadcastjob-1000 muster/kruise-scheduler writes=1.00",
		"ratio broadcastjob-1000 muster/kruise-scheduler cpu=0.75",
	}
	if diff := cmp.Diff(want, ratioLines("broadcastjob-1000", muster, []runResult{peer})); diff != "" {
		t.Errorf("ratioLines() (-want +got):\n%s", diff)
	}
}

func TestMedianTakesEachFigureOnItsOwn(t *testing.T) {
	runs := []runResult{
		{side: "muster", complete: 9 * time.Second, created: 1 * time.Second, writes: writeCounts{pods: 1000}},
		{side: "muster", complete: 7 * time.Second, created: 3 * time.Second, writes: writeCounts{pods: 1002}},
		{side: "muster", complete: 8 * time.Second, created: 2 * time.Second, writes: writeCounts{pods: 1200}},
	}
	got := median(runs)
	if got.complete != 8*time.Second || got.created != 2*time.Second || got.writes.pods != 1002 {
		t.Errorf("median() = complete %s, created %s, pods %.0f; want 8s, 2s, 1002", got.complete, got.created, got.writes.pods)
	}
	even := median(runs[:2])
	if even.complete != 8*time.Second {
		t.Errorf("median of two = %s, want their mean 8s", even.complete)
	}
}
