package monitoring_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/deploy/monitoring"
)

func TestRuleDecodesStrictlyAndEveryExpressionParses(t *testing.T) {
	rule, err := monitoring.Rule()
	if err != nil {
		t.Fatal(err)
	}
	if len(rule.Spec.Groups) == 0 {
		t.Fatal("the PrometheusRule has no groups")
	}
	exprs, err := monitoring.Expressions()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range exprs {
		if _, err := monitoring.Parser.ParseExpr(e.Expr); err != nil {
			t.Errorf("%s: %v\n%s", e.Source, err, e.Raw)
		}
	}
	data, err := monitoring.FS.ReadFile(monitoring.RuleFile)
	if err != nil {
		t.Fatal(err)
	}
	typo := strings.Replace(string(data), "annotations:", "anotations:", 1)
	if _, err := monitoring.DecodeRule([]byte(typo)); err == nil {
		t.Error("a rule with a misspelt field (anotations) decoded")
	}
}

// TestEveryAlertIsDocumented checks what a receiver shows: severity, a summary and a
// description, and a runbook link to a section that exists.
func TestEveryAlertIsDocumented(t *testing.T) {
	runbooks, err := os.ReadFile("../../docs/runbooks.md")
	if err != nil {
		t.Fatal(err)
	}
	anchors := headingAnchors(string(runbooks))
	rule, err := monitoring.Rule()
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "https://github.com/musterhq/muster/blob/main/docs/runbooks.md#"
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			switch r.Labels["severity"] {
			case "critical", "warning", "info":
			default:
				t.Errorf("%s: severity %q, want critical, warning or info", r.Alert, r.Labels["severity"])
			}
			for _, a := range []string{"summary", "description"} {
				if strings.TrimSpace(r.Annotations[a]) == "" {
					t.Errorf("%s: no %s", r.Alert, a)
				}
			}
			url := r.Annotations["runbook_url"]
			anchor, ok := strings.CutPrefix(url, prefix)
			if !ok || !anchors[anchor] {
				t.Errorf("%s: runbook_url %q is not a section of docs/runbooks.md (%s<anchor>)", r.Alert, url, prefix)
			}
		}
	}
}

var notAnchor = regexp.MustCompile(`[^a-z0-9 _-]`)

// headingAnchors returns the anchors GitHub gives a Markdown file's headings.
func headingAnchors(md string) map[string]bool {
	anchors := map[string]bool{}
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		anchors[strings.ReplaceAll(notAnchor.ReplaceAllString(h, ""), " ", "-")] = true
	}
	return anchors
}

func TestMetricNames(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`max by (cluster) (muster_member_heartbeat_age_seconds) > 40`, []string{"muster_member_heartbeat_age_seconds"}},
		{`histogram_quantile(0.99, sum by (le) (rate(muster_cron_schedule_lag_seconds_bucket[5m])))`, []string{"muster_cron_schedule_lag_seconds_bucket"}},
		{`a unless on (cluster) b{x="y"} or a`, []string{"a", "b"}},
		{`{__name__="workqueue_depth", name="fleetjob"}`, []string{"workqueue_depth"}},
		{`{__name__=~"workqueue_.+"}`, []string{}},
		{`vector(1)`, []string{}},
	} {
		got, err := monitoring.MetricNames(tc.expr)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("MetricNames(%s) (-want +got):\n%s", tc.expr, d)
		}
	}
	if _, err := monitoring.MetricNames(`rate(x[5m]`); err == nil {
		t.Error("an unbalanced expression parsed")
	}
}

func TestFamily(t *testing.T) {
	exported := func(name string) bool { return name == "lag_seconds" || name == "ops_count" }
	for name, want := range map[string]string{
		"lag_seconds_bucket": "lag_seconds",
		"lag_seconds_count":  "lag_seconds",
		"lag_seconds":        "lag_seconds",
		"ops_count":          "ops_count", // a family whose own name ends in _count
		"missing_sum":        "missing_sum",
	} {
		if got := monitoring.Family(name, exported); got != want {
			t.Errorf("Family(%s) = %s, want %s", name, got, want)
		}
	}
}

func TestDashboardExpressionsWalkRowsAndReplaceIntervals(t *testing.T) {
	dash := `{"panels": [
	  {"title": "Jobs", "targets": [{"refId": "A", "expr": "sum by (phase) (muster_jobs)"}, {"refId": "B", "expr": ""}]},
	  {"title": "Agents", "type": "row", "panels": [
	    {"title": "Pods", "targets": [{"refId": "A", "expr": "rate(muster_agent_pods_created_total{cluster=~\"$cluster\"}[$__rate_interval])"}]}
	  ]}
	]}`
	got, err := monitoring.DashboardExpressions("fleet.json", []byte(dash))
	if err != nil {
		t.Fatal(err)
	}
	want := []monitoring.Expression{
		{Source: `fleet.json: panel "Jobs", target A`, Raw: "sum by (phase) (muster_jobs)", Expr: "sum by (phase) (muster_jobs)"},
		{
			Source: `fleet.json: panel "Pods", target A`,
			Raw:    `rate(muster_agent_pods_created_total{cluster=~"$cluster"}[$__rate_interval])`,
			Expr:   `rate(muster_agent_pods_created_total{cluster=~"$cluster"}[5m])`,
		},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("DashboardExpressions (-want +got):\n%s", d)
	}
	if _, err := monitoring.MetricNames(got[1].Expr); err != nil {
		t.Errorf("the replaced query does not parse: %v", err)
	}
}
