// Package monitoring embeds Muster's monitoring objects for the Prometheus Operator
// (PodMonitors and a PrometheusRule) and its Grafana dashboards, and reads the PromQL in
// them, so tests can check every expression against Prometheus's own parser and rule
// evaluation, and against the metrics the hub and the agents really export.
package monitoring

import (
	"embed"
	"encoding/json"
	"fmt"
	"github.com/prometheus/common/model"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"
)

// RuleFile is the PrometheusRule's file in FS.
const RuleFile = "prometheusrule.yaml"

// FS holds the Prometheus Operator objects (*.yaml) and dashboards/*.json.
//
//go:embed *.yaml dashboards
var FS embed.FS

// Parser is the PromQL parser expressions are checked with: Prometheus's defaults, with no
// experimental functions, so an expression that parses here runs on a stock Prometheus.
var Parser = parser.NewParser(parser.Options{})

// Rule decodes the PrometheusRule strictly: a field the Prometheus Operator's types do
// not have (a typo such as "annotation:") is an error, not silently dropped.
func Rule() (*monitoringv1.PrometheusRule, error) {
	data, err := FS.ReadFile(RuleFile)
	if err != nil {
		return nil, err
	}
	return DecodeRule(data)
}

// DecodeRule decodes a PrometheusRule strictly, as Rule does.
func DecodeRule(data []byte) (*monitoringv1.PrometheusRule, error) {
	var rule monitoringv1.PrometheusRule
	if err := yaml.UnmarshalStrict(data, &rule); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", RuleFile, err)
	}
	if rule.APIVersion != monitoringv1.SchemeGroupVersion.String() || rule.Kind != monitoringv1.PrometheusRuleKind {
		return nil, fmt.Errorf("%s holds a %s %s, want a %s %s", RuleFile, rule.APIVersion, rule.Kind,
			monitoringv1.SchemeGroupVersion, monitoringv1.PrometheusRuleKind)
	}
	return &rule, nil
}

// Expression is one PromQL expression and where it is written.
type Expression struct {
	// Source names the file and the rule or panel, for error messages.
	Source string
	// Raw is the expression as written; Expr is Raw with Grafana's interval variables
	// replaced by a duration, so that Prometheus's parser accepts it.
	Raw, Expr string
}

// Expressions returns every PromQL expression in the PrometheusRule and the dashboards.
func Expressions() ([]Expression, error) {
	rule, err := Rule()
	if err != nil {
		return nil, err
	}
	var out []Expression
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			name := r.Alert
			if name == "" {
				name = "record " + r.Record
			}
			raw := r.Expr.String()
			out = append(out, Expression{Source: fmt.Sprintf("%s: group %s, %s", RuleFile, g.Name, name), Raw: raw, Expr: raw})
		}
	}
	files, err := fs.Glob(FS, "dashboards/*.json")
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		data, err := FS.ReadFile(f)
		if err != nil {
			return nil, err
		}
		exprs, err := DashboardExpressions(path.Base(f), data)
		if err != nil {
			return nil, err
		}
		out = append(out, exprs...)
	}
	return out, nil
}

// panel is the part of a Grafana panel that holds queries; a row holds its panels.
type panel struct {
	Title   string `json:"title"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

// DashboardExpressions returns the queries of a Grafana dashboard's panels
// (panels[].targets[].expr), including those of the panels inside rows.
func DashboardExpressions(file string, data []byte) ([]Expression, error) {
	var dash struct {
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", file, err)
	}
	var out []Expression
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, t := range p.Targets {
				if strings.TrimSpace(t.Expr) == "" {
					continue
				}
				out = append(out, Expression{
					Source: fmt.Sprintf("%s: panel %q, target %s", file, p.Title, t.RefID),
					Raw:    t.Expr, Expr: grafanaIntervals.ReplaceAllString(t.Expr, "5m"),
				})
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	return out, nil
}

// grafanaIntervals are the variables Grafana replaces with a duration before it sends a
// query; variables inside label values need no replacing to parse.
var grafanaIntervals = regexp.MustCompile(`\$__(rate_interval|interval|range)\b|\$\{__(rate_interval|interval|range)\}`)

// MetricNames parses expr with Prometheus's parser and returns the metric names it
// selects, sorted and without duplicates. A selector without a fixed name (only
// {__name__=~"..."}) names none.
func MetricNames(expr string) ([]string, error) {
	e, err := Parser.ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		for _, m := range vs.LabelMatchers {
			if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
				seen[m.Value] = true
			}
		}
		return nil
	})
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// Family is the metric family a series name belongs to: a histogram's or summary's
// _bucket, _sum and _count series belong to the family without the suffix. exported
// reports whether a family name is scraped.
func Family(name string, exported func(string) bool) string {
	if exported(name) {
		return name
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && exported(base) {
			return base
		}
	}
	return name
}
