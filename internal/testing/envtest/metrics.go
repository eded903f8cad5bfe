package envtest

import (
	"testing"

	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metric gathers controller-runtime's registry, as /metrics serves it, and returns the
// summed value of the named metric's series whose labels include labels: a counter's or
// gauge's value, a histogram's sample count. Absent series count as 0.
func Metric(t testing.TB, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatalf("gathering metrics: %v", err)
	}
	for _, f := range families {
		if f.GetName() == name {
			sum, _ := Sample(f, labels)
			return sum
		}
	}
	return 0
}

// Sample is the value of the series of family whose labels include labels (a counter's
// or gauge's value, a histogram's sample count), summed over matching series, and whether
// any matched.
func Sample(family *dto.MetricFamily, labels map[string]string) (float64, bool) {
	sum, found := 0.0, false
	for _, m := range family.GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		case m.Untyped != nil:
			sum += m.Untyped.GetValue()
		}
	}
	return sum, found
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	found := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			found++
		}
	}
	return found == len(want)
}

// HistogramSum is the summed observations of the named histogram's series whose labels
// include labels.
func HistogramSum(t testing.TB, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatalf("gathering metrics: %v", err)
	}
	sum := 0.0
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if f.GetName() == name && m.Histogram != nil && hasLabels(m, labels) {
				sum += m.Histogram.GetSampleSum()
			}
		}
	}
	return sum
}
