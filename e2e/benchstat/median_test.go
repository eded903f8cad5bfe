package benchstat

import "testing"

func TestMedian(t *testing.T) {
	id := func(x float64) float64 { return x }
	for _, tc := range []struct {
		runs []float64
		want float64
	}{
		{nil, 0},
		{[]float64{7}, 7},
		{[]float64{9, 1, 5}, 5},
		{[]float64{4, 1, 3, 10}, 3.5},
	} {
		if got := Median(tc.runs, id); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.runs, got, tc.want)
		}
	}
}
