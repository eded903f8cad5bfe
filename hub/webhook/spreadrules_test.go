package webhook_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// TestWorkloadSpreadRules: the rules of api/workloadspread that CEL cannot check reach the
// user as the refusal of their spread, whether or not the target exists yet.
func TestWorkloadSpreadRules(t *testing.T) {
	ns := env.Namespace(t)
	percent := func(p string) *intstr.IntOrString { return ptrTo(intstr.FromString(p)) }
	tests := []struct {
		name   string
		change func(*musterv1.WorkloadSpread)
		want   []refusal
	}{
		{name: "percents over 100",
			change: func(ws *musterv1.WorkloadSpread) {
				ws.Spec.Subsets[0].MaxReplicas, ws.Spec.Subsets[1].MaxReplicas = percent("60%"), percent("50%")
			},
			want: []refusal{{"spec.subsets", `Invalid value: "110%": the maxReplicas percents add up to more than 100%`}}},
		{name: "bounded percents under 100",
			change: func(ws *musterv1.WorkloadSpread) {
				ws.Spec.Subsets[0].MaxReplicas, ws.Spec.Subsets[1].MaxReplicas = percent("30%"), percent("30%")
			},
			want: []refusal{{"spec.subsets[1].maxReplicas", `Invalid value: "30%": the maxReplicas percents add up to 60%: leave the last subset's maxReplicas unset so every replica has a subset`}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := spreadOf("spread", ns, "absent", "zone-a", "zone-b")
			tc.change(ws)
			expectRefused(t, ws, tc.want)
		})
	}
	// As OpenKruise admits it: the later subsets take replicas while it cannot.
	t.Run("an unbounded subset before the last", func(t *testing.T) {
		ws := spreadOf("unbounded-first", ns, "absent", "zone-a", "zone-b")
		ws.Spec.Subsets[0].MaxReplicas = nil
		expectAdmitted(t, ws)
	})
	t.Run("a second spread of one target", func(t *testing.T) {
		expectAdmitted(t, spreadOf("first", ns, "shared", "zone-a", "zone-b"))
		expectRefused(t, spreadOf("second", ns, "shared", "zone-c"),
			[]refusal{{"spec.targetRef", "Forbidden: FleetJob shared is already spread by WorkloadSpread first"}})
	})
}
