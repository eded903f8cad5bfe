package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func TestCertificateExpiryIsReadAtScrapeTime(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	notAfter := now.Add(time.Hour)
	reg := prometheus.NewRegistry()
	reg.MustRegister(CertificateExpiry("member1", func() time.Time { return notAfter }, func() time.Time { return now }))
	read := func() (float64, string) {
		families, err := reg.Gather()
		if err != nil || len(families) != 1 || len(families[0].GetMetric()) != 1 {
			t.Fatalf("gather = %v, %v", families, err)
		}
		m := families[0].GetMetric()[0]
		return m.GetGauge().GetValue(), label(m, "cluster")
	}
	if v, cluster := read(); v != 3600 || cluster != "member1" {
		t.Errorf("expiry %v for cluster %q, want 3600 for member1", v, cluster)
	}
	notAfter = now.Add(24 * time.Hour) // rotated
	if v, _ := read(); v != 86400 {
		t.Errorf("after rotation the expiry is %v, want 86400", v)
	}
	now = notAfter.Add(time.Minute) // expired
	if v, _ := read(); v != -60 {
		t.Errorf("an expired certificate reads %v, want -60", v)
	}
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
