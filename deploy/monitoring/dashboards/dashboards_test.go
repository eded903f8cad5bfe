package dashboards_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// exportedMetrics are the metric names the dashboards may select, each one the hub, an
// agent or controller-runtime exports (true marks a histogram, whose _bucket, _count and
// _sum series the queries select). A name outside this list is a panel that stays empty
// forever; the e2e monitoring test checks this list against real scrapes of a fleet.
var exportedMetrics = map[string]bool{
	// hub (hub/metrics, hub/webhook)
	"muster_placement_decisions_total":          false,
	"muster_cron_schedule_lag_seconds":          true,
	"muster_cron_missed_slots_total":            false,
	"muster_jobs":                               false,
	"muster_member_heartbeat_age_seconds":       false,
	"muster_member_works_failed":                false,
	"muster_member_inventory_age_seconds":       false,
	"muster_webhook_certificate_expiry_seconds": false,
	// agent (agent/metrics)
	"muster_agent_work_apply_duration_seconds": true,
	"muster_agent_work_apply_failures_total":   false,
	"muster_agent_certificate_expiry_seconds":  false,
	"muster_agent_pods_created_total":          false,
	"muster_agent_pods_deleted_total":          false,
	// controller-runtime, on both
	"controller_runtime_reconcile_total":        false,
	"controller_runtime_reconcile_errors_total": false,
	"controller_runtime_reconcile_time_seconds": true,
	"workqueue_depth":                           false,
}

// grafanaVariables are the values Grafana itself substitutes for its global variables
// before it sends a query; any value of the right shape will do for parsing.
var grafanaVariables = map[string]string{
	"__rate_interval": "5m",
	"__interval":      "1m",
	"__range":         "1h",
}

// classicDashboard is the SDK's type of the dashboard JSON model Grafana imports from a
// file. The SDK marks it deprecated in favour of its v2 schema, a different format that
// only Grafana 12's new API reads; the files here are for every Grafana in use.
type classicDashboard = dashboard.Dashboard //nolint:staticcheck // see above

// dashboardFile is one decoded dashboard with the file it came from.
type dashboardFile struct {
	path string
	dash classicDashboard
}

func TestDashboardsDecodeStrictly(t *testing.T) {
	files := loadDashboards(t)
	if len(files) != 2 {
		t.Fatalf("found %d dashboards, want muster-fleet.json and muster-member.json", len(files))
	}
	uids, titles := map[string]string{}, map[string]string{}
	for _, f := range files {
		d := f.dash
		if err := sdkError(d.Validate()); err != nil {
			t.Errorf("%s: %v", f.path, err)
		}
		uid, title := deref(d.Uid), deref(d.Title)
		if uid == "" || title == "" {
			t.Errorf("%s: uid %q and title %q must both be set (imports and links find a dashboard by uid)", f.path, uid, title)
		}
		if other, ok := uids[uid]; ok {
			t.Errorf("%s: uid %q is also %s's", f.path, uid, other)
		}
		if other, ok := titles[title]; ok {
			t.Errorf("%s: title %q is also %s's", f.path, title, other)
		}
		uids[uid], titles[title] = f.path, f.path
		if want := dashboard.NewDashboard().SchemaVersion; d.SchemaVersion != want {
			t.Errorf("%s: schemaVersion %d, want %d (current Grafana's, which the SDK models)", f.path, d.SchemaVersion, want)
		}
		if !hasDatasourceVariable(d) {
			t.Errorf("%s: no datasource variable of type prometheus: every import would need its data source edited in", f.path)
		}
	}
}

func TestPanelsQueryExportedMetrics(t *testing.T) {
	for _, f := range loadDashboards(t) {
		variables := declaredVariables(f.dash)
		panels := allPanels(f.dash)
		if len(panels) == 0 {
			t.Errorf("%s: no panels", f.path)
		}
		for _, p := range panels {
			name := fmt.Sprintf("%s: panel %q", f.path, deref(p.Title))
			if deref(p.Title) == "" {
				t.Errorf("%s: panel %d has no title", f.path, deref(p.Id))
			}
			checkPanelType(t, name, p)
			if len(p.Targets) == 0 {
				t.Errorf("%s: no query", name)
			}
			for _, target := range p.Targets {
				q, ok := target.(*prometheus.Dataquery)
				if !ok {
					t.Errorf("%s: query %T is not a Prometheus query (is its datasource.type prometheus?)", name, target)
					continue
				}
				if q.Datasource == nil || deref(q.Datasource.Uid) != "${datasource}" {
					t.Errorf("%s: query %s must use the datasource variable, ${datasource}", name, deref(q.RefId))
				}
				for _, err := range checkExpr(q.Expr, variables) {
					t.Errorf("%s: query %s: %v", name, deref(q.RefId), err)
				}
			}
		}
	}
}

// TestControllersExist keeps the controller names the dashboards select in step with the
// names the hub and the agent give their controllers (their Named(...) calls): a renamed
// controller would leave its panels silently empty, and a new one would be missing.
func TestControllersExist(t *testing.T) {
	hub, agent := controllerNames(t, "hub"), controllerNames(t, "agent")
	want := map[string][]string{"muster-fleet.json": hub, "muster-member.json": agent}
	for _, f := range loadDashboards(t) {
		used := map[string]bool{}
		for _, p := range allPanels(f.dash) {
			for _, target := range p.Targets {
				if q, ok := target.(*prometheus.Dataquery); ok {
					for _, c := range selectedControllers(t, q.Expr, declaredVariables(f.dash)) {
						used[c] = true
					}
				}
			}
		}
		known := want[filepath.Base(f.path)]
		for c := range used {
			if !slices.Contains(known, c) {
				t.Errorf("%s selects controller %q, which is none of %v", f.path, c, known)
			}
		}
		for _, c := range known {
			if !used[c] {
				t.Errorf("%s shows nothing of controller %q", f.path, c)
			}
		}
	}
}

func loadDashboards(t *testing.T) []dashboardFile {
	t.Helper()
	registerPlugins()
	paths, err := filepath.Glob("*.json")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	files := make([]dashboardFile, 0, len(paths))
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f := dashboardFile{path: path}
		if err := strictDecode(raw); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := json.Unmarshal(raw, &f.dash); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		files = append(files, f)
	}
	return files
}

// strictDecode fails on a field Grafana's schema does not have, a missing required field or
// a value of the wrong type, in the dashboard, its panels, their options (checked against
// the panel plugin's types) and their queries (against the Prometheus query's). Only the
// errors count: on success the SDK's strict decoder (v0.0.22) leaves panels and queries
// out of the result, as each nested decoder reports success as a non-nil error holding no
// errors, so the tests inspect a second, ordinary decode.
func strictDecode(raw []byte) error {
	registerPlugins()
	var d classicDashboard
	return sdkError(d.UnmarshalJSONStrict(raw))
}

// registerPlugins lets the strict decoder check panel options and queries against the
// types of the plugins the dashboards use, not only the dashboard's own fields.
func registerPlugins() {
	runtime := cog.NewRuntime()
	runtime.RegisterDataqueryVariant(prometheus.VariantConfig())
	runtime.RegisterPanelcfgVariant(timeseries.VariantConfig())
	runtime.RegisterPanelcfgVariant(stat.VariantConfig())
}

func checkPanelType(t *testing.T, name string, p dashboard.Panel) {
	t.Helper()
	switch p.Type {
	case "timeseries":
		if _, ok := p.Options.(*timeseries.Options); !ok {
			t.Errorf("%s: options did not decode as a time series panel's", name)
		}
	case "stat":
		if _, ok := p.Options.(*stat.Options); !ok {
			t.Errorf("%s: options did not decode as a stat panel's", name)
		}
	default:
		t.Errorf("%s: panel type %q, want timeseries or stat", name, p.Type)
	}
}

// allPanels lists the dashboard's panels, those inside collapsed rows included.
func allPanels(d classicDashboard) []dashboard.Panel {
	var panels []dashboard.Panel
	for _, p := range d.Panels {
		switch {
		case p.Panel != nil:
			panels = append(panels, *p.Panel)
		case p.RowPanel != nil:
			panels = append(panels, p.RowPanel.Panels...)
		}
	}
	return panels
}

func hasDatasourceVariable(d classicDashboard) bool {
	for _, v := range d.Templating.List {
		if v.Name == "datasource" && v.Type == dashboard.VariableTypeDatasource &&
			v.Query != nil && v.Query.String != nil && *v.Query.String == "prometheus" {
			return true
		}
	}
	return false
}

func declaredVariables(d classicDashboard) map[string]bool {
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
	}
	return vars
}

var variableRef = regexp.MustCompile(`\$\{(\w+)(?::\w+)?\}|\$(\w+)`)

// substitute replaces template variables as Grafana would before sending the query, with
// a value of the right shape: a duration for Grafana's intervals, a name for the
// dashboard's own variables. A variable the dashboard does not declare is an error.
func substitute(expr string, declared map[string]bool) (string, error) {
	var unknown []string
	out := variableRef.ReplaceAllStringFunc(expr, func(ref string) string {
		m := variableRef.FindStringSubmatch(ref)
		name := m[1] + m[2]
		if v, ok := grafanaVariables[name]; ok {
			return v
		}
		if declared[name] {
			return "member-1"
		}
		unknown = append(unknown, name)
		return ref
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("undeclared template variables %v in %q", unknown, expr)
	}
	return out, nil
}

func parse(expr string, declared map[string]bool) (parser.Expr, error) {
	s, err := substitute(expr, declared)
	if err != nil {
		return nil, err
	}
	e, err := parser.NewParser(parser.Options{}).ParseExpr(s)
	if err != nil {
		return nil, fmt.Errorf("%q does not parse: %w", s, err)
	}
	return e, nil
}

// checkExpr parses expr and returns an error for each metric it selects that nothing
// exports, or that it selects without a metric name.
func checkExpr(expr string, declared map[string]bool) []error {
	e, err := parse(expr, declared)
	if err != nil {
		return []error{err}
	}
	var errs []error
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		if vs.Name == "" {
			errs = append(errs, fmt.Errorf("selector %s names no metric", vs))
		} else if !exported(vs.Name) {
			errs = append(errs, fmt.Errorf("metric %s is not one Muster or controller-runtime exports", vs.Name))
		}
		return nil
	})
	return errs
}

func exported(name string) bool {
	if _, ok := exportedMetrics[name]; ok {
		return true
	}
	for _, suffix := range []string{"_bucket", "_count", "_sum"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && exportedMetrics[base] {
			return true
		}
	}
	return false
}

// selectedControllers returns the controller names expr's selectors match on their
// controller label, each = value or each alternative of a =~ a|b|c list.
func selectedControllers(t *testing.T, expr string, declared map[string]bool) []string {
	t.Helper()
	e, err := parse(expr, declared)
	if err != nil {
		return nil // TestPanelsQueryExportedMetrics reports it
	}
	var names []string
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		for _, m := range vs.LabelMatchers {
			if m.Name != "controller" {
				continue
			}
			switch m.Type {
			case labels.MatchEqual:
				names = append(names, m.Value)
			case labels.MatchRegexp:
				names = append(names, strings.Split(m.Value, "|")...)
			default:
				t.Errorf("%q: match controllers by = or by =~ a list of names", expr)
			}
		}
		return nil
	})
	return names
}

var namedController = regexp.MustCompile(`\bNamed\("([^"]+)"\)`)

// controllerNames returns the names the Go files under the repository's dir (hub or
// agent) give their controllers.
func controllerNames(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	root := filepath.Join("..", "..", "..", dir)
	err := filepath.WalkDir(root, func(path string, _ os.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range namedController.FindAllStringSubmatch(string(src), -1) {
			names = append(names, m[1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatalf("no Named(...) controllers under %s", root)
	}
	sort.Strings(names)
	return names
}

// sdkError returns err, or nil for the SDK's way of reporting success: an empty
// cog.BuildErrors in a non-nil error interface.
func sdkError(err error) error {
	var errs cog.BuildErrors
	if errors.As(err, &errs) && len(errs) == 0 {
		return nil
	}
	return err
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// TestStrictDecodingRejects shows the checks above would catch what they claim to: each row
// breaks a valid dashboard the way a hand edit or a Grafana upgrade might.
func TestStrictDecodingRejects(t *testing.T) {
	cases := map[string]func(d map[string]any){
		"unknown dashboard field":     func(d map[string]any) { d["refreshh"] = "30s" },
		"schemaVersion of wrong type": func(d map[string]any) { d["schemaVersion"] = "42" },
		"unknown panel field":         func(d map[string]any) { firstPanel(d, "stat")["titel"] = "x" },
		"unknown stat option":         func(d map[string]any) { options(d, "stat")["sparkline"] = true },
		"missing stat option":         func(d map[string]any) { delete(options(d, "stat"), "reduceOptions") },
		"unknown time series option":  func(d map[string]any) { options(d, "timeseries")["legendd"] = map[string]any{} },
		"unknown query field":         func(d map[string]any) { target(d)["expression"] = "up" },
		"query expr of wrong type":    func(d map[string]any) { target(d)["expr"] = 1 },
	}
	raw, err := os.ReadFile("muster-fleet.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := strictDecode(raw); err != nil {
		t.Fatalf("the unbroken dashboard: %v", err)
	}
	for name, breakIt := range cases {
		t.Run(name, func(t *testing.T) {
			var d map[string]any
			if err := json.Unmarshal(raw, &d); err != nil {
				t.Fatal(err)
			}
			breakIt(d)
			broken, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			if err := strictDecode(broken); err == nil {
				t.Error("decoded without error")
			}
		})
	}
}

func TestCheckExpr(t *testing.T) {
	declared := map[string]bool{"datasource": true, "cluster": true}
	cases := []struct {
		expr    string
		wantErr string
	}{
		{expr: `sum by (kind) (rate(muster_agent_pods_created_total[$__rate_interval]))`},
		{expr: `histogram_quantile(0.99, sum by (le) (rate(muster_cron_schedule_lag_seconds_bucket[5m])))`},
		{expr: `max(muster_member_heartbeat_age_seconds{cluster="$cluster"})`},
		{expr: `muster_cron_schedule_lag_seconds_sum`},
		{expr: `muster_jobs_bucket`, wantErr: "not one Muster or controller-runtime exports"},
		{expr: `muster_member_heartbeat_seconds`, wantErr: "not one Muster or controller-runtime exports"},
		{expr: `{cluster="a"}`, wantErr: "names no metric"},
		{expr: `max(muster_jobs{cluster="$member"})`, wantErr: "undeclared template variables [member]"},
		{expr: `sum by (kind (muster_jobs)`, wantErr: "does not parse"},
	}
	for _, tc := range cases {
		errs := checkExpr(tc.expr, declared)
		switch {
		case tc.wantErr == "" && len(errs) > 0:
			t.Errorf("%s: %v", tc.expr, errs)
		case tc.wantErr != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.wantErr)):
			t.Errorf("%s: errors %v, want one containing %q", tc.expr, errs, tc.wantErr)
		}
	}
}

func firstPanel(d map[string]any, panelType string) map[string]any {
	for _, p := range d["panels"].([]any) {
		if p := p.(map[string]any); p["type"] == panelType {
			return p
		}
	}
	panic("no " + panelType + " panel")
}

func options(d map[string]any, panelType string) map[string]any {
	return firstPanel(d, panelType)["options"].(map[string]any)
}

func target(d map[string]any) map[string]any {
	return firstPanel(d, "timeseries")["targets"].([]any)[0].(map[string]any)
}
