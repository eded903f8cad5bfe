package monitoring_test

import (
	"fmt"
	"github.com/prometheus/common/model"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"

	"github.com/musterhq/muster/deploy/monitoring"
)

// alertCase is a promtool-style rule test: series in promqltest's notation, one sample
// every interval from time 0, the rule evaluated at every sample's time, and the alerts
// (by the labels they keep, rendered as {k="v"}) that must have fired at some point.
type alertCase struct {
	alert    string
	name     string
	interval string
	series   []string
	steps    int
	fired    []string
}

// Defaults: a sample and an evaluation every 15s for 30 minutes.
var alertCases = []alertCase{
	{alert: "MemberUnreachable", name: "an agent stops renewing; the other renews", series: []string{
		`muster_member_heartbeat_age_seconds{cluster="m1",pod="hub-0"} 3 6 3 6 3+15x116`,
		`muster_member_heartbeat_age_seconds{cluster="m2",pod="hub-0"} 3 6 3 6 3 6 3 6 3+0x112`,
	}, fired: []string{`{cluster="m1"}`}},
	{alert: "MemberUnreachable", name: "renewals late but within the grace period", series: []string{
		`muster_member_heartbeat_age_seconds{cluster="m1",pod="hub-0"} 0+13x3 0+13x3 0+13x3 0+13x3 0+13x3 0+13x3 0+13x3 0+13x3`,
		`muster_member_heartbeat_age_seconds{cluster="m2",pod="hub-0"} 39+0x120`,
	}},
	{alert: "MemberNeverHeartbeated", name: "a cluster without a lease", series: []string{
		`muster_member_works_failed{cluster="new"} 0+0x120`,
		`muster_member_works_failed{cluster="old"} 0+0x120`,
		`muster_member_heartbeat_age_seconds{cluster="old"} 5+0x120`,
	}, fired: []string{`{cluster="new"}`}},
	{alert: "MemberNeverHeartbeated", name: "its first renewal comes within 15 minutes", series: []string{
		`muster_member_works_failed{cluster="new"} 0+0x120`,
		`muster_member_heartbeat_age_seconds{cluster="new"} _x40 5+0x80`,
	}},
	{alert: "InventoryStale", name: "the agent heartbeats but reports no nodes", series: []string{
		`muster_member_inventory_age_seconds{cluster="m1"} 0+15x120`,
		`muster_member_heartbeat_age_seconds{cluster="m1"} 5+0x120`,
	}, fired: []string{`{cluster="m1"}`}},
	{alert: "InventoryStale", name: "reports every 5 minutes; a silent agent is MemberUnreachable's", series: []string{
		`muster_member_inventory_age_seconds{cluster="m1"} 0+15x20 0+15x20 0+15x20 0+15x20 0+15x20 0+15x20`,
		`muster_member_heartbeat_age_seconds{cluster="m1"} 5+0x120`,
		`muster_member_inventory_age_seconds{cluster="m2"} 0+15x120`,
		`muster_member_heartbeat_age_seconds{cluster="m2"} 0+15x120`,
	}},
	{alert: "AgentCertificateExpiring", name: "renewal keeps failing", series: []string{
		`muster_agent_certificate_expiry_seconds{cluster="m1"} 8000-15x120`,
	}, fired: []string{`{cluster="m1"}`}},
	{alert: "AgentCertificateExpiring", name: "renewed at 20% of 24h left", series: []string{
		`muster_agent_certificate_expiry_seconds{cluster="m1"} 17500-15x60 86400-15x60`,
	}},
	{alert: "WebhookCertificateExpiring", name: "three weeks left", interval: "1m", steps: 120, series: []string{
		`muster_webhook_certificate_expiry_seconds{pod="hub-0"} 1814400-60x120`,
		`muster_webhook_certificate_expiry_seconds{pod="hub-1"} 31536000-60x120`,
	}, fired: []string{`{}`}},
	{alert: "WebhookCertificateExpiring", name: "a fresh certificate", interval: "1m", steps: 120, series: []string{
		`muster_webhook_certificate_expiry_seconds{pod="hub-0"} 31536000-60x120`,
	}},
	{alert: "HubReconcileErrors", name: "a hub controller fails 4 times a second", series: []string{
		`controller_runtime_reconcile_errors_total{job="muster-hub",controller="fleetjob"} 0+60x120`,
		`controller_runtime_reconcile_errors_total{job="muster-hub",controller="health"} 0+0x120`,
	}, fired: []string{`{controller="fleetjob"}`}},
	{alert: "HubReconcileErrors", name: "occasional conflicts, and an agent's errors", series: []string{
		`controller_runtime_reconcile_errors_total{job="muster-hub",controller="fleetjob"} 0+1x120`,
		`controller_runtime_reconcile_errors_total{job="muster-agent",controller="work"} 0+60x120`,
	}},
	{alert: "HubWorkQueueDepth", name: "a queue stays long", series: []string{
		`workqueue_depth{job="muster-hub",name="fleetcronjob",controller="fleetcronjob"} 500+0x120`,
		`workqueue_depth{job="muster-hub",name="fleetjob",controller="fleetjob"} 0+0x120`,
	}, fired: []string{`{name="fleetcronjob"}`}},
	{alert: "HubWorkQueueDepth", name: "a burst drains in minutes; the agents' queues are not the hub's", series: []string{
		`workqueue_depth{job="muster-hub",name="fleetcronjob",controller="fleetcronjob"} 500+0x20 0+0x100`,
		`workqueue_depth{job="muster-agent",name="work",controller="work"} 500+0x120`,
	}},
	{alert: "WorksFailingToApply", name: "refused Works, or failures that keep growing", series: []string{
		`muster_member_works_failed{cluster="m1"} 2+0x120`,
		`muster_agent_work_apply_failures_total{cluster="m2"} 0+1x120`,
		`muster_member_works_failed{cluster="m2"} 0+0x120`,
	}, fired: []string{`{cluster="m1"}`, `{cluster="m2"}`}},
	{alert: "WorksFailingToApply", name: "a refusal fixed within minutes, old failures", series: []string{
		`muster_member_works_failed{cluster="m1"} 0 0 1+0x20 0+0x98`,
		`muster_agent_work_apply_failures_total{cluster="m1"} 0+1x20 20+0x100`,
	}},
	{alert: "JobsFailed", name: "a FleetJob fails", series: []string{
		`muster_jobs{kind="FleetJob",phase="Failed"} 0+0x40 1+0x80`,
		`muster_jobs{kind="BroadcastJob",phase="Failed"} 2+0x120`,
	}, fired: []string{`{kind="FleetJob"}`}},
	{alert: "JobsFailed", name: "failed jobs deleted, others running", series: []string{
		`muster_jobs{kind="FleetJob",phase="Failed"} 3+0x40 1+0x80`,
		`muster_jobs{kind="FleetJob",phase="Running"} 0+1x120`,
	}},
	{alert: "FailoverHeld", name: "evictions held for 20 minutes", series: []string{
		`muster_failovers_held_total{kind="FleetJob"} 0+2x120`,
	}, fired: []string{`{kind="FleetJob"}`}},
	{alert: "FailoverHeld", name: "evictions held for 5 minutes, then moved", series: []string{
		`muster_failovers_held_total{kind="FleetJob"} 0+2x5 10+0x115`,
	}},
	{alert: "FleetCronJobMissedSlots", name: "a slot missed", series: []string{
		`muster_cron_missed_slots_total{kind="FleetJob"} 0+0x40 1+0x80`,
	}, fired: []string{`{kind="FleetJob"}`}},
	{alert: "FleetCronJobMissedSlots", name: "slots missed long ago", series: []string{
		`muster_cron_missed_slots_total{kind="FleetJob"} 2+0x300`,
	}, steps: 300},
	{alert: "FleetCronJobLagHigh", name: "runs created minutes late", series: lagSeries("BroadcastJob", "300"), fired: []string{`{kind="BroadcastJob"}`}},
	{alert: "FleetCronJobLagHigh", name: "runs created within a second", series: lagSeries("FleetJob", "1")},
}

// lagSeries is muster_cron_schedule_lag_seconds with one run a minute, each created
// within the bucket upTo.
func lagSeries(kind, upTo string) []string {
	var out []string
	below := true
	for _, le := range []string{"0.5", "1", "30", "60", "300", "+Inf"} {
		v := "0+0x120"
		if le == upTo {
			below = false
		}
		if !below {
			v = "0+0.25x120"
		}
		out = append(out, fmt.Sprintf(`muster_cron_schedule_lag_seconds_bucket{kind=%q,le=%q} %s`, kind, le, v))
	}
	return out
}

func TestEveryAlertHasCasesThatFireAndThatDoNot(t *testing.T) {
	rule, err := monitoring.Rule()
	if err != nil {
		t.Fatal(err)
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, c := range alertCases {
		if len(c.fired) > 0 {
			fires[c.alert] = true
		} else {
			quiet[c.alert] = true
		}
	}
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" && (!fires[r.Alert] || !quiet[r.Alert]) {
				t.Errorf("%s: a case where it fires: %v, where it does not: %v", r.Alert, fires[r.Alert], quiet[r.Alert])
			}
		}
	}
}

func TestAlertsFireOnlyWhenTheyShould(t *testing.T) {
	for _, c := range alertCases {
		t.Run(c.alert+"/"+c.name, func(t *testing.T) {
			interval, steps := c.interval, c.steps
			if interval == "" {
				interval = "15s"
			}
			if steps == 0 {
				steps = 120
			}
			step, err := time.ParseDuration(interval)
			if err != nil {
				t.Fatal(err)
			}
			load := "load " + interval + "\n  " + strings.Join(c.series, "\n  ")
			storage := promqltest.LoadedStorage(t, load)
			engine := promqltest.NewTestEngine(t, false, 0, promqltest.DefaultMaxSamplesPerQuery)
			rule, err := monitoring.AlertingRule(c.alert)
			if err != nil {
				t.Fatal(err)
			}
			alert, err := monitoring.Alert(c.alert)
			if err != nil {
				t.Fatal(err)
			}
			hold := time.Duration(0)
			if alert.For != nil {
				d, _ := time.ParseDuration(string(*alert.For))
				hold = d
			}
			fired := evaluate(t, rule, rules.EngineQueryFunc(engine, storage), step, steps, hold)
			if d := cmp.Diff(c.fired, fired, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("alerts that fired (-want +got):\n%s", d)
			}
		})
	}
}

// evaluate runs rule at every step from time 0 and returns the alerts that fired, by
// their labels without alertname and severity, each checked to have been pending for
// the rule's for first and to carry its annotations with the labels filled in.
func evaluate(t *testing.T, rule *rules.AlertingRule, query rules.QueryFunc, step time.Duration, steps int, hold time.Duration) []string {
	t.Helper()
	fired := map[string]bool{}
	for i := 0; i <= steps; i++ {
		ts := time.Unix(0, 0).UTC().Add(time.Duration(i) * step)
		firing, _, err := monitoring.Firing(t.Context(), rule, query, ts)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range firing {
			key := a.Labels.MatchLabels(false, model.MetricNameLabel, "alertname", "severity").String()
			if !fired[key] {
				if since := ts.Sub(a.ActiveAt); since < hold {
					t.Errorf("%s fired at %s, %s after its condition held, before its for of %s", key, ts, since, hold)
				}
				checkAnnotations(t, a)
			}
			fired[key] = true
		}
	}
	keys := make([]string, 0, len(fired))
	for k := range fired {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func checkAnnotations(t *testing.T, a *rules.Alert) {
	t.Helper()
	summary, description := a.Annotations.Get("summary"), a.Annotations.Get("description")
	for _, text := range []string{summary, description} {
		if strings.Contains(text, "error expanding template") || strings.Contains(text, "<no value>") || strings.Contains(text, "{{") {
			t.Errorf("%s: annotation not expanded: %q", a.Labels, text)
		}
	}
	a.Labels.Range(func(l labels.Label) {
		if l.Name == "alertname" || l.Name == "severity" {
			return
		}
		if !strings.Contains(description, l.Value) {
			t.Errorf("%s: the description does not name %s %s: %q", a.Labels, l.Name, l.Value, description)
		}
	})
}
