//go:build e2e

package fleetjob

import (
	"context"
	"github.com/prometheus/common/model"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/util/teststorage"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/deploy/monitoring"
	"github.com/musterhq/muster/e2e/framework"
)

// TestMonitoringQueriesNameExportedMetrics scrapes the hub and both agents and fails on
// any metric a PromQL expression of the PrometheusRule or the dashboards selects that
// none of them exports: a renamed metric must not leave an alert or a panel silent.
func TestMonitoringQueriesNameExportedMetrics(t *testing.T) {
	t.Parallel()
	// Counters by kind appear once a job has moved them.
	fj := create(t, newFleetJob("monitored", musterv1.PlacementDuplicate, 1, 1))
	waitForPhase(t, fj, musterv1.JobComplete, 2*time.Minute)
	exported := map[string]bool{}
	for _, process := range []string{"hub", "agent-" + member1.Name, "agent-" + member2.Name} {
		families, err := framework.Scrape(t.Context(), muster.MetricsURLs[process])
		if err != nil {
			t.Fatalf("%s: %v", process, err)
		}
		for name := range families {
			exported[name] = true
		}
	}
	exprs, err := monitoring.Expressions()
	if err != nil {
		t.Fatal(err)
	}
	isExported := func(name string) bool { return exported[name] }
	for _, e := range exprs {
		names, err := monitoring.MetricNames(e.Expr)
		if err != nil {
			t.Errorf("%s: %v", e.Source, err)
			continue
		}
		for _, n := range names {
			if !exported[monitoring.Family(n, isExported)] {
				t.Errorf("%s selects %s, which neither the hub nor the agents export", e.Source, n)
			}
		}
	}
}

// TestACutOffAgentIsAlertedAndItsWorkMoves cuts member2's agent off from the hub (a
// partition: the agent runs on, and so do its member's pods) under FleetJobs and a
// BroadcastJob that tolerate an unreachable cluster for a few seconds. It scrapes the hub
// every few seconds into a TSDB, as Prometheus would, evaluating the PrometheusRule's
// MemberUnreachable after each scrape: it must fire for member2 once the grace period and
// its for have passed, and never for member1, whose agent reaches the hub. Meanwhile the
// jobs move off member2 and complete on member1, the fenced one without an index running
// in both at once. Then member1's agent is cut off too, and nothing moves; the agents,
// reaching the hub again, delete the shards the hub withdrew. One partition serves all of
// it, to keep the suite short.
func TestACutOffAgentIsAlertedAndItsWorkMoves(t *testing.T) {
	rule, err := monitoring.AlertingRule("MemberUnreachable")
	if err != nil {
		t.Fatal(err)
	}
	store := teststorage.New(t)
	query := rules.EngineQueryFunc(promqltest.NewTestEngine(t, false, 0, promqltest.DefaultMaxSamplesPerQuery), store)
	work := placeFailoverWork(t)
	muster.Links[member2.Name].Cut()
	back := false
	defer func() {
		if !back {
			reconnect(t, member2)
		}
	}()
	stopped := time.Now()
	for deadline := stopped.Add(100 * time.Second); ; time.Sleep(5 * time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("MemberUnreachable did not fire for %s within %s of cutting its agent off", member2.Name, time.Since(stopped).Round(time.Second))
		}
		ts := scrapeInto(t, store, muster.MetricsURLs["hub"], "muster_member_heartbeat_age_seconds")
		firing, _, err := monitoring.Firing(t.Context(), rule, query, ts)
		if err != nil {
			t.Fatal(err)
		}
		clusters := alertClusters(firing)
		if clusters[member1.Name] {
			t.Fatalf("MemberUnreachable fired for %s, whose agent reaches the hub", member1.Name)
		}
		if clusters[member2.Name] {
			t.Logf("MemberUnreachable fired for %s %s after its agent was cut off", member2.Name, time.Since(stopped).Round(time.Second))
			break
		}
	}
	t.Run("its work moves to member1", func(t *testing.T) { work.expectMoved(t, stopped) })
	t.Run("with every agent cut off, nothing moves", func(t *testing.T) {
		defer reconnect(t, member1)
		work.expectNothingMovesWithEveryAgentCutOff(t)
	})
	reconnect(t, member2)
	back = true
	t.Run("its agent, back, deletes the withdrawn shards", work.expectWithdrawn)
}

// scrapeInto scrapes url and appends the samples of family to store at the scrape's time,
// which it returns.
func scrapeInto(t *testing.T, store *teststorage.TestStorage, url, family string) time.Time {
	t.Helper()
	families, err := framework.Scrape(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Now()
	app := store.Appender(t.Context())
	for _, m := range families[family].GetMetric() {
		if _, err := app.Append(0, seriesLabels(family, m), ts.UnixMilli(), m.GetGauge().GetValue()); err != nil {
			t.Fatal(err)
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	return ts
}

func seriesLabels(family string, m *dto.Metric) labels.Labels {
	b := labels.NewScratchBuilder(len(m.GetLabel()) + 1)
	b.Add(model.MetricNameLabel, family)
	for _, l := range m.GetLabel() {
		b.Add(l.GetName(), l.GetValue())
	}
	b.Sort()
	return b.Labels()
}

func alertClusters(alerts []*rules.Alert) map[string]bool {
	out := map[string]bool{}
	for _, a := range alerts {
		out[a.Labels.Get("cluster")] = true
	}
	return out
}

// reconnect heals member's link to the hub and waits until the hub sees it Available, as
// the suite's other tests expect.
func reconnect(t *testing.T, member *framework.Cluster) {
	muster.Links[member.Name].Heal()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := framework.WaitForClusterCondition(ctx, fleet.Hub, member.Name, musterv1.MemberClusterAvailable, metav1.ConditionTrue, time.Minute); err != nil {
		t.Fatal(err)
	}
}
