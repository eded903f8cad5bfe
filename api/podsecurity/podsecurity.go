// Package podsecurity decides the Pod Security level of a hub namespace and how it travels
// to the members. A hub namespace reaches many clusters, so one that says nothing gets a
// stricter level than a single cluster's default (privileged): the hub's default, baseline
// unless the hub admin chose another. The levels are Kubernetes' own (the
// pod-security.kubernetes.io labels, parsed and defaulted by k8s.io/pod-security-admission),
// so a hub namespace means on the hub what it would mean in one cluster.
//
// The hub writes the labels the member namespaces get in an annotation on each Work; the
// agent reads them back with MemberLabelsOf and puts them on the namespaces it creates. It
// is pure (no clients): the hub's webhook, its controllers and the agent share it.
package podsecurity

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	psaapi "k8s.io/pod-security-admission/api"
)

// WorkAnnotation, on a Work, holds the Pod Security labels (as k=v,k=v) that a namespace the
// agent creates for the Work's manifests carries: the resolved labels of the hub namespace
// the Work's object came from.
const WorkAnnotation = "muster.dev/pod-security"

// DefaultLevel is the enforce level of a hub namespace without an enforce label, unless the
// hub says otherwise.
const DefaultLevel = psaapi.LevelBaseline

// Label keys per mode: level and version.
var modes = []struct{ level, version string }{
	{psaapi.EnforceLevelLabel, psaapi.EnforceVersionLabel},
	{psaapi.AuditLevelLabel, psaapi.AuditVersionLabel},
	{psaapi.WarnLevelLabel, psaapi.WarnVersionLabel},
}

// Resolve returns the policy of a hub namespace with labels nsLabels: what its
// pod-security.kubernetes.io labels say, read as the members' API servers read them, and
// for an enforce level it does not name, defaultLevel (DefaultLevel when empty) at the
// latest version. Audit and warn default to privileged, as upstream's. A label that does
// not parse is an error, and the policy then holds what upstream holds for it (restricted
// for enforce, privileged for audit and warn).
func Resolve(nsLabels map[string]string, defaultLevel psaapi.Level) (psaapi.Policy, field.ErrorList) {
	if defaultLevel == "" {
		defaultLevel = DefaultLevel
	}
	latest := psaapi.LatestVersion()
	defaults := psaapi.Policy{
		Enforce: psaapi.LevelVersion{Level: defaultLevel, Version: latest},
		Audit:   psaapi.LevelVersion{Level: psaapi.LevelPrivileged, Version: latest},
		Warn:    psaapi.LevelVersion{Level: psaapi.LevelPrivileged, Version: latest},
	}
	return psaapi.PolicyToEvaluate(nsLabels, defaults)
}

// ParseDefaultLevel parses the hub's default enforce level (its flag); empty is
// DefaultLevel.
func ParseDefaultLevel(s string) (psaapi.Level, error) {
	if s == "" {
		return DefaultLevel, nil
	}
	level, err := psaapi.ParseLevel(s)
	if err != nil {
		return "", fmt.Errorf("default pod security level %q: %w", s, err)
	}
	return level, nil
}

// MemberLabels returns the labels a member namespace gets for a hub namespace with labels
// nsLabels and policy p (Resolve's): enforce and its version always, the hub's default
// included, so that a member enforces at least what the hub checked; audit and warn only
// when the hub namespace names them, so a member's own defaults for those stay.
func MemberLabels(nsLabels map[string]string, p psaapi.Policy) map[string]string {
	out := map[string]string{
		psaapi.EnforceLevelLabel:   string(p.Enforce.Level),
		psaapi.EnforceVersionLabel: p.Enforce.Version.String(),
	}
	for _, m := range []struct {
		level, version string
		lv             psaapi.LevelVersion
	}{
		{psaapi.AuditLevelLabel, psaapi.AuditVersionLabel, p.Audit},
		{psaapi.WarnLevelLabel, psaapi.WarnVersionLabel, p.Warn},
	} {
		_, hasLevel := nsLabels[m.level]
		_, hasVersion := nsLabels[m.version]
		if hasLevel || hasVersion {
			out[m.level] = string(m.lv.Level)
			out[m.version] = m.lv.Version.String()
		}
	}
	return out
}

// Encode writes member labels as WorkAnnotation's value, keys sorted.
func Encode(memberLabels map[string]string) string {
	return labels.Set(memberLabels).String()
}

// MemberLabelsOf reads WorkAnnotation's value: the Pod Security labels, and nothing else,
// with levels and versions that parse; nil for an empty value. Anything else is an error:
// the annotation cannot set other labels on a member namespace.
func MemberLabelsOf(value string) (map[string]string, error) {
	if value == "" {
		return nil, nil
	}
	set, err := labels.ConvertSelectorToLabelsMap(value)
	if err != nil {
		return nil, fmt.Errorf("annotation %s: %w", WorkAnnotation, err)
	}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		if err := checkLabel(k, set[k]); err != nil {
			return nil, fmt.Errorf("annotation %s: label %s=%q: %w", WorkAnnotation, k, set[k], err)
		}
	}
	return set, nil
}

func checkLabel(key, value string) error {
	for _, m := range modes {
		switch key {
		case m.level:
			_, err := psaapi.ParseLevel(value)
			return err
		case m.version:
			_, err := psaapi.ParseVersion(value)
			return err
		}
	}
	return fmt.Errorf("not a Pod Security label")
}

// IsLabel says whether key is one of the Pod Security labels.
func IsLabel(key string) bool {
	for _, m := range modes {
		if key == m.level || key == m.version {
			return true
		}
	}
	return false
}
