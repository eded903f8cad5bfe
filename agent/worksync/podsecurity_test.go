package worksync

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWithPodSecurity(t *testing.T) {
	const (
		enforce = "pod-security.kubernetes.io/enforce"
		version = "pod-security.kubernetes.io/enforce-version"
		warn    = "pod-security.kubernetes.io/warn"
	)
	tests := []struct {
		name        string
		have, want  map[string]string
		out         map[string]string
		wantChanged bool
	}{
		{name: "same labels", have: map[string]string{CreatedNamespaceLabel: createdByAgent, enforce: "baseline", version: "latest"},
			want: map[string]string{enforce: "baseline", version: "latest"},
			out:  map[string]string{CreatedNamespaceLabel: createdByAgent, enforce: "baseline", version: "latest"}},
		{name: "level raised", have: map[string]string{CreatedNamespaceLabel: createdByAgent, enforce: "baseline", version: "latest"},
			want: map[string]string{enforce: "restricted", version: "latest"}, wantChanged: true,
			out: map[string]string{CreatedNamespaceLabel: createdByAgent, enforce: "restricted", version: "latest"}},
		{name: "warn dropped", have: map[string]string{CreatedNamespaceLabel: createdByAgent, enforce: "baseline", warn: "restricted"},
			want: map[string]string{enforce: "baseline"}, wantChanged: true,
			out: map[string]string{CreatedNamespaceLabel: createdByAgent, enforce: "baseline"}},
		{name: "first labels on an old namespace", have: map[string]string{CreatedNamespaceLabel: createdByAgent, "kubernetes.io/metadata.name": "x"},
			want: map[string]string{enforce: "baseline", version: "latest"}, wantChanged: true,
			out: map[string]string{CreatedNamespaceLabel: createdByAgent, "kubernetes.io/metadata.name": "x", enforce: "baseline", version: "latest"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, changed := withPodSecurity(tc.have, tc.want)
			if changed != tc.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tc.wantChanged)
			}
			if diff := cmp.Diff(tc.out, out); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}
