//go:build e2e

package workloadspread

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

const ns = "default"

func subset(name string, max *intstr.IntOrString) musterv1.WorkloadSpreadSubset {
	return musterv1.WorkloadSpreadSubset{Name: name, ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{"member-" + name}}, MaxReplicas: max}
}

func spread(name, target string, subsets ...musterv1.WorkloadSpreadSubset) *musterv1.WorkloadSpread {
	return &musterv1.WorkloadSpread{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: musterv1.WorkloadSpreadSpec{
			TargetReference: musterv1.TargetReference{APIVersion: "muster.dev/v1alpha1", Kind: "FleetJob", Name: target},
			Subsets:         subsets,
		},
	}
}

func num(n int32) *intstr.IntOrString  { return ptr.To(intstr.FromInt32(n)) }
func pct(s string) *intstr.IntOrString { return ptr.To(intstr.FromString(s)) }

func TestAdmissionRefusesEachBrokenRule(t *testing.T) {
	taken := spread("first", "taken", subset("a", nil))
	if err := fleet.Hub.Client.Create(t.Context(), taken); err != nil {
		t.Fatalf("a valid WorkloadSpread was refused: %v", err)
	}
	t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.Background(), taken) })
	adaptive := spread("adaptive", "job", subset("a", num(3)), subset("b", num(2)))
	adaptive.Spec.ScheduleStrategy = musterv1.ScheduleStrategy{Type: musterv1.ScheduleAdaptive, Adaptive: &musterv1.AdaptiveStrategy{RescheduleCriticalSeconds: ptr.To[int32](296)}}
	badPatch := subset("a", nil)
	badPatch.Patch = &runtime.RawExtension{Raw: []byte(`{"status":{"phase":"Running"}}`)}

	cases := []struct {
		name string
		ws   *musterv1.WorkloadSpread
		want string
	}{
		{"mixed types", spread("mixed", "job", subset("a", num(3)), subset("b", pct("50%")), subset("c", nil)),
			"maxReplicas must be integers in every subset or percents in every subset"},
		{"fractional percent", spread("fraction", "job", subset("a", pct("12.5%")), subset("b", nil)),
			`spec.subsets[0].maxReplicas: Invalid value: "12.5%"`},
		{"percents over 100", spread("over", "job", subset("a", pct("60%")), subset("b", pct("50%")), subset("c", nil)),
			`spec.subsets: Invalid value: "110%": the maxReplicas percents add up to more than 100%`},
		{"percents under 100, last bounded", spread("under", "job", subset("a", pct("40%")), subset("b", pct("30%"))),
			"the maxReplicas percents add up to 70%: leave the last subset's maxReplicas unset"},
		{"adaptive with a bounded last subset", adaptive,
			"with scheduleStrategy Adaptive the last subset must have no maxReplicas"},
		{"rescheduleCriticalSeconds out of bounds", adaptive,
			"with several subsets rescheduleCriticalSeconds must be at most 295 / (subsets - 1)"},
		{"target already spread", spread("second", "taken", subset("a", nil)),
			"spec.targetRef: Forbidden: FleetJob taken is already spread by WorkloadSpread first"},
		{"no clusters", spread("nowhere", "job", musterv1.WorkloadSpreadSubset{Name: "a"}),
			"spec.subsets[0]: Required value: set clusterSelector or clusterNames"},
		{"patch beyond the pod template", spread("patch", "job", badPatch),
			`the patch may set only metadata and spec of the pod template, not "status"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := fleet.Hub.Client.Create(t.Context(), tc.ws.DeepCopy())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("create = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestAdmissionAdmitsWhatOpenKruiseAdmits: bounds taken from OpenKruise's webhook.
func TestAdmissionAdmitsWhatOpenKruiseAdmits(t *testing.T) {
	off := spread("reschedule-off", "off", subset("a", num(3)), subset("b", nil))
	off.Spec.ScheduleStrategy = musterv1.ScheduleStrategy{Type: musterv1.ScheduleAdaptive, Adaptive: &musterv1.AdaptiveStrategy{RescheduleCriticalSeconds: ptr.To[int32](0)}}
	for _, ws := range []*musterv1.WorkloadSpread{
		spread("unbounded-first", "unbounded", subset("a", nil), subset("b", num(2))),
		off,
	} {
		t.Run(ws.Name, func(t *testing.T) {
			if err := fleet.Hub.Client.Create(t.Context(), ws); err != nil {
				t.Fatalf("refused: %v", err)
			}
			t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.Background(), ws) })
		})
	}
}
