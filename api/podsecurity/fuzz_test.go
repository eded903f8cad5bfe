package podsecurity

import (
	"maps"
	"testing"

	psaapi "k8s.io/pod-security-admission/api"
)

// The annotation comes from the hub but travels through a Work any user with Work access
// could write: whatever it says, the agent may put only Pod Security labels, with levels
// and versions that parse, on a member namespace, and what it accepts reads back the same
// once encoded.
func FuzzMemberLabelsOfSetsOnlyPodSecurityLabels(f *testing.F) {
	for _, seed := range []string{
		"",
		"pod-security.kubernetes.io/enforce=restricted,pod-security.kubernetes.io/enforce-version=v1.30",
		"pod-security.kubernetes.io/warn=baseline",
		"pod-security.kubernetes.io/enforce=privileged,team=a",
		"pod-security.kubernetes.io/enforce=root",
		"pod-security.kubernetes.io/audit-version=latest,pod-security.kubernetes.io/audit=restricted",
		"a=b=c",
		"pod-security.kubernetes.io/enforce in (privileged)",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		got, err := MemberLabelsOf(value)
		if err != nil {
			return
		}
		for k, v := range got {
			if !IsLabel(k) {
				t.Fatalf("MemberLabelsOf(%q) sets %s, not a Pod Security label", value, k)
			}
			if checkLabel(k, v) != nil {
				t.Fatalf("MemberLabelsOf(%q) sets %s=%q, which does not parse", value, k, v)
			}
		}
		again, err := MemberLabelsOf(Encode(got))
		if err != nil || !maps.Equal(again, got) {
			t.Fatalf("MemberLabelsOf(Encode(%v)) = %v, %v", got, again, err)
		}
	})
}

// What the hub writes for any namespace that resolves without errors, the agent reads back
// whole: enforce always, so a member never enforces less than the hub checked.
func TestMemberLabelsTravelWhole(t *testing.T) {
	for _, ns := range []map[string]string{
		nil,
		{"team": "a"},
		{psaapi.EnforceLevelLabel: "privileged"},
		{psaapi.EnforceLevelLabel: "restricted", psaapi.EnforceVersionLabel: "v1.29"},
		{psaapi.WarnLevelLabel: "restricted"},
		{psaapi.AuditVersionLabel: "v1.28"},
	} {
		for _, def := range []psaapi.Level{"", psaapi.LevelRestricted, psaapi.LevelPrivileged} {
			p, errs := Resolve(ns, def)
			if len(errs) > 0 {
				t.Fatalf("Resolve(%v): %v", ns, errs)
			}
			sent := MemberLabels(ns, p)
			got, err := MemberLabelsOf(Encode(sent))
			if err != nil || !maps.Equal(got, sent) {
				t.Errorf("namespace %v, default %q: sent %v, agent read %v, %v", ns, def, sent, got, err)
			}
			if got[psaapi.EnforceLevelLabel] == "" {
				t.Errorf("namespace %v, default %q: no enforce level reaches the member", ns, def)
			}
		}
	}
}
