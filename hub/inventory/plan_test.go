package inventory

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestPlanFor(t *testing.T) {
	in := corev1.NodeSelectorOpIn
	cases := []struct {
		name string
		spec *corev1.PodSpec
		want plan
	}{
		{"no selector scans", podSpec(), plan{scan: true}},
		{"pairs, sorted by key", podSpec(selector("zone", "z1", "pool", "gpu")),
			plan{alternatives: [][]lookup{{{key: "pool", values: []string{"gpu"}}, {key: "zone", values: []string{"z1"}}}}}},
		{"the empty key narrows nothing", podSpec(selector("", "x")), plan{scan: true}},
		{"one term per alternative, each with the selector's pairs",
			podSpec(selector("pool", "gpu"), required(term(expr("zone", in, "z1", "z2")), term(expr("arch", corev1.NodeSelectorOpExists)))),
			plan{alternatives: [][]lookup{
				{{key: "pool", values: []string{"gpu"}}, {key: "zone", values: []string{"z1", "z2"}}},
				{{key: "pool", values: []string{"gpu"}}, {key: "arch", anyValue: true}},
			}}},
		{"NotIn, DoesNotExist, Gt and Lt are left to nodefit",
			podSpec(required(term(expr("a", in, "x"), expr("b", corev1.NodeSelectorOpNotIn, "y"), expr("c", corev1.NodeSelectorOpDoesNotExist),
				expr("d", corev1.NodeSelectorOpGt, "1"), expr("e", corev1.NodeSelectorOpLt, "9")))),
			plan{alternatives: [][]lookup{{{key: "a", values: []string{"x"}}}}}},
		{"a term without lookup scans", podSpec(required(term(expr("a", in, "x")), term(expr("b", corev1.NodeSelectorOpNotIn, "y")))), plan{scan: true}},
		{"a term without lookup but the selector's narrows",
			podSpec(selector("pool", "gpu"), required(term(expr("b", corev1.NodeSelectorOpNotIn, "y")))),
			plan{alternatives: [][]lookup{{{key: "pool", values: []string{"gpu"}}}}}},
		{"In without values finds nothing", podSpec(required(term(expr("a", in)))), plan{alternatives: [][]lookup{{{key: "a"}}}}},
		{"no terms scans", podSpec(required()), plan{scan: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, planFor(tc.spec), cmp.AllowUnexported(plan{}, lookup{})); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}
