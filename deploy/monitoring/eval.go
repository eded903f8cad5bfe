package monitoring

import (
	"context"
	"fmt"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/rules"
)

// Alert returns the PrometheusRule's alert called name.
func Alert(name string) (*monitoringv1.Rule, error) {
	rule, err := Rule()
	if err != nil {
		return nil, err
	}
	for _, g := range rule.Spec.Groups {
		for i := range g.Rules {
			if g.Rules[i].Alert == name {
				return &g.Rules[i], nil
			}
		}
	}
	return nil, fmt.Errorf("%s has no alert %s", RuleFile, name)
}

// AlertingRule returns the alert called name as Prometheus's rule manager runs it: its
// expression parsed, its for and keep_firing_for, labels and annotation templates.
func AlertingRule(name string) (*rules.AlertingRule, error) {
	r, err := Alert(name)
	if err != nil {
		return nil, err
	}
	expr, err := Parser.ParseExpr(r.Expr.String())
	if err != nil {
		return nil, fmt.Errorf("alert %s: %w", name, err)
	}
	hold, err := duration(string(ptrOr(r.For)))
	if err != nil {
		return nil, fmt.Errorf("alert %s: for: %w", name, err)
	}
	var keep time.Duration
	if r.KeepFiringFor != nil {
		if keep, err = duration(string(*r.KeepFiringFor)); err != nil {
			return nil, fmt.Errorf("alert %s: keep_firing_for: %w", name, err)
		}
	}
	return rules.NewAlertingRule(name, expr, hold, keep, labels.FromMap(r.Labels), labels.FromMap(r.Annotations),
		labels.EmptyLabels(), "", true, promslog.NewNopLogger()), nil
}

func ptrOr(d *monitoringv1.Duration) monitoringv1.Duration {
	if d == nil {
		return ""
	}
	return *d
}

func duration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := model.ParseDuration(s)
	return time.Duration(d), err
}

// Firing evaluates rule at ts, as one evaluation of its group, and returns its alerts that
// fire and those pending (their condition holds, for less than the rule's for).
func Firing(ctx context.Context, rule *rules.AlertingRule, query rules.QueryFunc, ts time.Time) (firing, pending []*rules.Alert, err error) {
	if _, err := rule.Eval(ctx, 0, ts, query, nil, 0); err != nil {
		return nil, nil, fmt.Errorf("evaluating %s at %s: %w", rule.Name(), ts.Format(time.RFC3339), err)
	}
	for _, a := range rule.ActiveAlerts() {
		switch a.State {
		case rules.StateFiring:
			firing = append(firing, a)
		case rules.StatePending:
			pending = append(pending, a)
		}
	}
	return firing, pending, nil
}
