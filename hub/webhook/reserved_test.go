package webhook

import (
	"slices"
	"testing"
)

func TestReservedBy(t *testing.T) {
	reserved := slices.Concat(DefaultReservedNamespaces, []string{"platform", "infra-*"})
	tests := []struct {
		namespace, want string
	}{
		{"kube-system", "kube-system"},
		{"kube-public", "kube-public"},
		{"kube-node-lease", "kube-node-lease"},
		{"muster-system", "muster-system"},
		{"muster-agent", "muster-agent"},
		{"muster-member-member1", "muster-member-*"},
		{"muster-member-", "muster-member-*"},
		{"platform", "platform"},
		{"infra-db", "infra-*"},
		// Names that only look like reserved ones are a tenant's.
		{"kube-systems", ""},
		{"my-kube-system", ""},
		{"muster-agents", ""},
		{"muster-members", ""},
		{"platform-team", ""},
		{"infra", ""},
		{"default", ""},
		{"team-a", ""},
	}
	for _, tc := range tests {
		if got := reservedBy(tc.namespace, reserved); got != tc.want {
			t.Errorf("reservedBy(%q) = %q, want %q", tc.namespace, got, tc.want)
		}
	}
}

func TestNamespaceErrors(t *testing.T) {
	if errs := namespaceErrors("team-a", DefaultReservedNamespaces); len(errs) != 0 {
		t.Errorf("team-a refused: %v", errs)
	}
	errs := namespaceErrors("muster-member-c1", DefaultReservedNamespaces)
	want := "metadata.namespace: Forbidden: namespace muster-member-c1 is reserved (muster-member-*): " +
		"Muster would run this object in the namespace of the same name on every member, which belongs to the system or to Muster itself; use another namespace"
	if len(errs) != 1 || errs[0].Error() != want {
		t.Errorf("errors = %v, want %q", errs, want)
	}
}
