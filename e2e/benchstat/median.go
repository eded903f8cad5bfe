// Package benchstat holds the statistics the side-by-side fleet benchmarks share.
package benchstat

import "slices"

// Median is the median of one figure over runs (the mean of the middle two for an even
// count); 0 for no runs. Each figure is taken on its own, so a side's medians may come
// from different runs.
func Median[R any](runs []R, figure func(R) float64) float64 {
	if len(runs) == 0 {
		return 0
	}
	xs := make([]float64, len(runs))
	for i, r := range runs {
		xs[i] = figure(r)
	}
	slices.Sort(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}
