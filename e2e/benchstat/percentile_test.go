package benchstat

import (
	"testing"
	"time"
)

func TestPercentileIsTheNearestRank(t *testing.T) {
	sorted := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct {
		p    int
		want time.Duration
	}{{0, 1}, {1, 1}, {50, 5}, {51, 6}, {99, 10}, {100, 10}} {
		if got := Percentile(sorted, c.p); got != c.want {
			t.Errorf("Percentile(1..10, %d) = %d, want %d", c.p, got, c.want)
		}
	}
	if got := Percentile(nil, 50); got != 0 {
		t.Errorf("Percentile(none) = %d, want 0", got)
	}
}
