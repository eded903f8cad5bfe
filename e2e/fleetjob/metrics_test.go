//go:build e2e

package fleetjob

import (
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// expectation is one series a scrape must hold, with a value in [min, max].
type expectation struct {
	metric   string
	labels   map[string]string
	min, max float64
}

// TestMetricsEndpointsServeMusterMetrics runs a FleetJob in both members, then scrapes the
// hub's and each agent's /metrics over HTTP, as Prometheus does, for the Muster metrics
// that job moved.
func TestMetricsEndpointsServeMusterMetrics(t *testing.T) {
	t.Parallel()
	fj := create(t, newFleetJob("scraped", musterv1.PlacementDuplicate, 1, 1))
	waitForPhase(t, fj, musterv1.JobComplete, 2*time.Minute)

	hub := []expectation{
		{"muster_placement_decisions_total", map[string]string{"kind": "FleetJob", "outcome": "Placed"}, 1, 1e9},
		{"muster_placement_decision_seconds", map[string]string{"kind": "FleetJob"}, 1, 1e9},
		{"muster_jobs", map[string]string{"kind": "FleetJob", "phase": "Complete"}, 1, 1e9},
	}
	for _, m := range []*framework.Cluster{member1, member2} {
		hub = append(hub,
			// The agents renew every few seconds; a minute-old lease would be unavailable.
			expectation{"muster_member_heartbeat_age_seconds", map[string]string{"cluster": m.Name}, 0, 60},
			expectation{"muster_member_works_failed", map[string]string{"cluster": m.Name}, 0, 0})
	}
	expectScraped(t, "hub", hub)
	for _, m := range []*framework.Cluster{member1, member2} {
		expectScraped(t, "agent-"+m.Name, []expectation{
			{"muster_agent_pods_created_total", map[string]string{"kind": "Job"}, 1, 1e9},
			{"muster_agent_work_apply_duration_seconds", map[string]string{"cluster": m.Name}, 1, 1e9},
			// musterctl join issues a certificate for days, not seconds.
			{"muster_agent_certificate_expiry_seconds", map[string]string{"cluster": m.Name}, 3600, 1e9},
			// Reconcile latency comes from controller-runtime, beside Muster's own.
			{"controller_runtime_reconcile_time_seconds", nil, 1, 1e9},
		})
	}
}

// expectScraped scrapes the named process's endpoint until every expectation holds (a
// counter may lag the status it follows by a reconcile) or a deadline passes.
func expectScraped(t *testing.T, process string, want []expectation) {
	t.Helper()
	url := muster.MetricsURLs[process]
	if url == "" {
		t.Fatalf("no metrics endpoint recorded for %s", process)
	}
	var last string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		families, err := framework.Scrape(t.Context(), url)
		if err != nil {
			last = err.Error()
			continue
		}
		if last = unmet(families, want); last == "" {
			return
		}
	}
	t.Errorf("%s (%s): %s", process, url, last)
}

func unmet(families map[string]*dto.MetricFamily, want []expectation) string {
	for _, e := range want {
		f, ok := families[e.metric]
		if !ok {
			return fmt.Sprintf("no %s", e.metric)
		}
		v, found := envtest.Sample(f, e.labels)
		if !found || v < e.min || v > e.max {
			return fmt.Sprintf("%s%v = %v (found %v), want it in [%v, %v]", e.metric, e.labels, v, found, e.min, e.max)
		}
	}
	return ""
}
