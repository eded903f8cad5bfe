package dashboard

import (
	"html/template"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
)

// funcs are the templates' helpers: wording and CSS classes, nothing that reads the hub.
var funcs = template.FuncMap{
	"relative": relative,
	"stamp":    stamp,
	"state":    state,
	"key":      func(parts ...string) string { return strings.Join(parts, "/") },
}

// relative says when t is from now: "3m ago", "in 42s", or "-" when there is no t.
func relative(t *time.Time, now time.Time) string {
	switch {
	case t == nil:
		return "-"
	case t.After(now):
		return "in " + duration.HumanDuration(t.Sub(now))
	default:
		return duration.HumanDuration(now.Sub(*t)) + " ago"
	}
}

// stamp is t in UTC for a tooltip, empty when there is no t.
func stamp(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// state maps a phase or health to the CSS class that colours it.
func state(s string) string {
	switch s {
	case "Complete", "Completed", "Available":
		return "ok"
	case "Failed", "Unavailable":
		return "bad"
	case "Running":
		return "run"
	default:
		return "wait"
	}
}
