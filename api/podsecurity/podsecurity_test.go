package podsecurity

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	psaapi "k8s.io/pod-security-admission/api"
)

// Resolve reads a hub namespace as a member's API server reads it, except that what the
// namespace does not say about enforce is the hub's default, not privileged.
func TestResolve(t *testing.T) {
	tests := []struct {
		name         string
		labels       map[string]string
		defaultLevel psaapi.Level
		enforce      string
		warn, audit  string
		errs         int
	}{
		{name: "unlabelled gets baseline", enforce: "baseline:latest", warn: "privileged:latest", audit: "privileged:latest"},
		{name: "unlabelled with another default", defaultLevel: psaapi.LevelRestricted, enforce: "restricted:latest", warn: "privileged:latest", audit: "privileged:latest"},
		{name: "enforce label wins over the default", labels: map[string]string{psaapi.EnforceLevelLabel: "privileged"},
			enforce: "privileged:latest", warn: "privileged:latest", audit: "privileged:latest"},
		{name: "only a version: the default level at that version", labels: map[string]string{psaapi.EnforceVersionLabel: "v1.30"},
			enforce: "baseline:v1.30", warn: "privileged:latest", audit: "privileged:latest"},
		{name: "only warn: enforce stays the default", labels: map[string]string{psaapi.WarnLevelLabel: "restricted"},
			enforce: "baseline:latest", warn: "restricted:latest", audit: "privileged:latest"},
		{name: "a stricter enforce label also warns, as upstream", labels: map[string]string{psaapi.EnforceLevelLabel: "restricted", psaapi.EnforceVersionLabel: "v1.29"},
			enforce: "restricted:v1.29", warn: "restricted:v1.29", audit: "privileged:latest"},
		{name: "audit with its version", labels: map[string]string{psaapi.AuditLevelLabel: "baseline", psaapi.AuditVersionLabel: "v1.28"},
			enforce: "baseline:latest", warn: "privileged:latest", audit: "baseline:v1.28"},
		{name: "an enforce level that does not parse fails closed", labels: map[string]string{psaapi.EnforceLevelLabel: "lenient"},
			enforce: "restricted:latest", warn: "privileged:latest", audit: "privileged:latest", errs: 1},
		{name: "a warn level that does not parse fails open", labels: map[string]string{psaapi.WarnLevelLabel: "loud", psaapi.EnforceVersionLabel: "1.30"},
			enforce: "baseline:latest", warn: "privileged:latest", audit: "privileged:latest", errs: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, errs := Resolve(tc.labels, tc.defaultLevel)
			got := []string{p.Enforce.String(), p.Warn.String(), p.Audit.String()}
			if diff := cmp.Diff([]string{tc.enforce, tc.warn, tc.audit}, got); diff != "" {
				t.Errorf("enforce, warn, audit (-want +got):\n%s", diff)
			}
			if len(errs) != tc.errs {
				t.Errorf("errors = %v, want %d", errs, tc.errs)
			}
		})
	}
}

// A member namespace always gets the enforce level the hub checked, and audit and warn
// only when the hub namespace names them.
func TestMemberLabels(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		want   map[string]string
	}{
		{name: "unlabelled: the default, written out",
			want: map[string]string{psaapi.EnforceLevelLabel: "baseline", psaapi.EnforceVersionLabel: "latest"}},
		{name: "privileged by the hub admin", labels: map[string]string{psaapi.EnforceLevelLabel: "privileged", "team": "a"},
			want: map[string]string{psaapi.EnforceLevelLabel: "privileged", psaapi.EnforceVersionLabel: "latest"}},
		{name: "warn and audit named", labels: map[string]string{psaapi.WarnLevelLabel: "restricted", psaapi.AuditVersionLabel: "v1.30"},
			want: map[string]string{
				psaapi.EnforceLevelLabel: "baseline", psaapi.EnforceVersionLabel: "latest",
				psaapi.WarnLevelLabel: "restricted", psaapi.WarnVersionLabel: "latest",
				psaapi.AuditLevelLabel: "privileged", psaapi.AuditVersionLabel: "v1.30",
			}},
		{name: "a level that does not parse goes as what it resolves to", labels: map[string]string{psaapi.EnforceLevelLabel: "lenient"},
			want: map[string]string{psaapi.EnforceLevelLabel: "restricted", psaapi.EnforceVersionLabel: "latest"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := Resolve(tc.labels, "")
			got := MemberLabels(tc.labels, p)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("member labels (-want +got):\n%s", diff)
			}
			back, err := MemberLabelsOf(Encode(got))
			if err != nil || !cmp.Equal(back, got) {
				t.Errorf("MemberLabelsOf(Encode(%v)) = %v, %v; want them back", got, back, err)
			}
		})
	}
}

// The annotation can only carry Pod Security labels with values that parse: a Work cannot
// use it to put other labels on a member namespace.
func TestMemberLabelsOf(t *testing.T) {
	tests := []struct {
		value   string
		want    map[string]string
		wantErr bool
	}{
		{value: "", want: nil},
		{value: "pod-security.kubernetes.io/enforce=restricted,pod-security.kubernetes.io/enforce-version=v1.30",
			want: map[string]string{psaapi.EnforceLevelLabel: "restricted", psaapi.EnforceVersionLabel: "v1.30"}},
		{value: "pod-security.kubernetes.io/enforce=restricted,muster.dev/created-by=muster-agent", wantErr: true},
		{value: "pod-security.kubernetes.io/enforce=lenient", wantErr: true},
		{value: "pod-security.kubernetes.io/warn-version=1.30", wantErr: true},
		{value: "pod-security.kubernetes.io/enforce", wantErr: true},
		{value: "pod-security.kubernetes.io/audit=baseline,,", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			got, err := MemberLabelsOf(tc.value)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseDefaultLevel(t *testing.T) {
	for in, want := range map[string]psaapi.Level{"": psaapi.LevelBaseline, "privileged": psaapi.LevelPrivileged, "restricted": psaapi.LevelRestricted} {
		if got, err := ParseDefaultLevel(in); err != nil || got != want {
			t.Errorf("ParseDefaultLevel(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseDefaultLevel("strict"); err == nil {
		t.Error(`ParseDefaultLevel("strict") passed; want an error`)
	}
}
