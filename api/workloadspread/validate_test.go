package workloadspread_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/api/workloadspread"
)

func subset(name string, max *intstr.IntOrString) musterv1.WorkloadSpreadSubset {
	return musterv1.WorkloadSpreadSubset{Name: name, ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{name}}, MaxReplicas: max}
}

func spread(subsets ...musterv1.WorkloadSpreadSubset) *musterv1.WorkloadSpread {
	return &musterv1.WorkloadSpread{
		ObjectMeta: metav1.ObjectMeta{Name: "ws", Namespace: "ns"},
		Spec: musterv1.WorkloadSpreadSpec{
			TargetReference: musterv1.TargetReference{APIVersion: "muster.dev/v1alpha1", Kind: "FleetJob", Name: "job"},
			Subsets:         subsets,
		},
	}
}

func num(n int) *intstr.IntOrString    { return ptr.To(intstr.FromInt32(int32(n))) }
func pct(s string) *intstr.IntOrString { return ptr.To(intstr.FromString(s)) }

func TestValidate(t *testing.T) {
	other := spread(subset("a", nil))
	other.Name = "other"
	tests := []struct {
		name   string
		ws     *musterv1.WorkloadSpread
		others []musterv1.WorkloadSpread
		want   []string // substrings of the errors, one per broken rule; none for valid
	}{
		{name: "numbers, last unbounded", ws: spread(subset("a", num(3)), subset("b", nil))},
		{name: "percents, last unbounded", ws: spread(subset("a", pct("40%")), subset("b", nil))},
		{name: "percents summing to 100", ws: spread(subset("a", pct("40%")), subset("b", pct("60%")))},
		{name: "all bounded numbers", ws: spread(subset("a", num(3)), subset("b", num(2)))},
		{name: "itself in the list of others", ws: spread(subset("a", nil)), others: []musterv1.WorkloadSpread{*spread(subset("a", nil))}},
		// As OpenKruise: the later subsets take replicas while the unbounded one cannot.
		{name: "an unbounded subset before the last", ws: spread(subset("a", nil), subset("b", num(2)))},
		{name: "an unbounded subset between percents", ws: spread(subset("a", pct("40%")), subset("b", nil), subset("c", pct("60%")))},
		{
			name: "percents over 100",
			ws:   spread(subset("a", pct("60%")), subset("b", pct("50%")), subset("c", nil)),
			want: []string{`spec.subsets: Invalid value: "110%": the maxReplicas percents add up to more than 100%`},
		},
		{
			name: "percents under 100 with a bounded last subset",
			ws:   spread(subset("a", pct("40%")), subset("b", pct("30%"))),
			want: []string{"the maxReplicas percents add up to 70%: leave the last subset's maxReplicas unset"},
		},
		{
			name: "percents under 100 with a bounded last subset after an unbounded one",
			ws:   spread(subset("a", nil), subset("b", pct("30%"))),
			want: []string{"the maxReplicas percents add up to 30%: leave the last subset's maxReplicas unset"},
		},
		{
			name: "a fractional percent",
			ws:   spread(subset("a", pct("12.5%")), subset("b", nil)),
			want: []string{"spec.subsets[0].maxReplicas: Invalid value: \"12.5%\": want a whole percent"},
		},
		{
			name:   "a target another spread already has",
			ws:     spread(subset("a", nil)),
			others: []musterv1.WorkloadSpread{*other},
			want:   []string{"spec.targetRef: Forbidden: FleetJob job is already spread by WorkloadSpread other"},
		},
		{
			name: "no clusters chosen",
			ws:   spread(musterv1.WorkloadSpreadSubset{Name: "a"}),
			want: []string{"spec.subsets[0]: Required value: set clusterSelector or clusterNames"},
		},
		{
			name: "a bad cluster selector",
			ws: spread(musterv1.WorkloadSpreadSubset{Name: "a", ClusterAffinity: musterv1.ClusterAffinity{ClusterSelector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "zone", Operator: "Near"}},
			}}}),
			want: []string{"spec.subsets[0].clusterSelector: Invalid value"},
		},
		{
			name: "a bad required node term",
			ws: func() *musterv1.WorkloadSpread {
				s := subset("a", nil)
				s.RequiredNodeSelectorTerm = &corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpIn}}}
				return spread(s)
			}(),
			want: []string{"spec.subsets[0].requiredNodeSelectorTerm: Invalid value"},
		},
		{
			name: "a patch that is not an object",
			ws:   withPatch(`["labels"]`),
			want: []string{`spec.subsets[0].patch: Invalid value: "[\"labels\"]": the patch must be a JSON object`},
		},
		{
			name: "a patch of something else than the pod template",
			ws:   withPatch(`{"status":{"phase":"Running"}}`),
			want: []string{`the patch may set only metadata and spec of the pod template, not "status"`},
		},
		{
			name: "a patch with an unknown field",
			ws:   withPatch(`{"spec":{"containers":[{"name":"main","cpus":2}]}}`),
			want: []string{"the patched pod template is not valid"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs := workloadspread.Validate(tc.ws, tc.others)
			if len(errs) != len(tc.want) {
				t.Fatalf("errors %v, want %d", errs, len(tc.want))
			}
			got := errs.ToAggregate()
			for _, w := range tc.want {
				if got == nil || !strings.Contains(got.Error(), w) {
					t.Errorf("errors %v, want one containing %q", got, w)
				}
			}
		})
	}
}

func withPatch(raw string) *musterv1.WorkloadSpread {
	s := subset("a", nil)
	s.Patch = &runtime.RawExtension{Raw: []byte(raw)}
	return spread(s)
}

func TestAValidPatchAddsLabelsAndResources(t *testing.T) {
	ws := withPatch(`{"metadata":{"labels":{"pool":"spot"}},"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"2"}}}]}}`)
	if errs := workloadspread.Validate(ws, nil); len(errs) != 0 {
		t.Fatalf("a patch adding a label and resources was refused: %v", errs)
	}
}
