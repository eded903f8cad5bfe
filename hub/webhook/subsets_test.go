package webhook_test

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// spreadOf makes a WorkloadSpread of the FleetJob target whose subsets are named names,
// each on one cluster; the last is unbounded.
func spreadOf(name, ns, target string, names ...string) *musterv1.WorkloadSpread {
	ws := &musterv1.WorkloadSpread{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: musterv1.WorkloadSpreadSpec{
			TargetReference: musterv1.TargetReference{APIVersion: musterv1.GroupVersion.String(), Kind: "FleetJob", Name: target},
		},
	}
	for _, n := range names {
		ws.Spec.Subsets = append(ws.Spec.Subsets, musterv1.WorkloadSpreadSubset{
			Name: n, ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{"member-" + n}},
		})
	}
	for i := range len(ws.Spec.Subsets) - 1 {
		ws.Spec.Subsets[i].MaxReplicas = ptrTo(intstr.FromInt32(1))
	}
	return ws
}

func patch(js string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(js)} }

const negativeCPUPatch = `{"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"-1"}}}]}}`

func indexed(completions int32) func(*musterv1.FleetJob) {
	return func(fj *musterv1.FleetJob) {
		fj.Spec.Template.Spec.CompletionMode = ptrTo(batchv1.IndexedCompletion)
		fj.Spec.Template.Spec.Completions = ptrTo(completions)
	}
}

// TestWorkloadSpreadSubsetsAreCheckedAsTheirJobs: a spread of an existing FleetJob is
// refused when a subset's Job would be refused by the members, on the subset's field.
func TestWorkloadSpreadSubsetsAreCheckedAsTheirJobs(t *testing.T) {
	ns := env.Namespace(t)
	expectAdmitted(t, fleetJob("job", ns, nil))
	// 55 characters: "<name>-9" is a host name, and so is the subset Job's "<name>-9"
	// (the hub cuts a subset Job's name to leave room for any index).
	long := strings.Repeat("d", 55)
	expectAdmitted(t, fleetJob(long, ns, indexed(10)))

	tests := []struct {
		name   string
		ws     *musterv1.WorkloadSpread
		change func(*musterv1.WorkloadSpread)
		want   []refusal
	}{
		{name: "patch with a negative cpu request", ws: spreadOf("spread", ns, "job", "zone-a", "zone-b"),
			change: func(ws *musterv1.WorkloadSpread) { ws.Spec.Subsets[1].Patch = patch(negativeCPUPatch) },
			want: []refusal{{"spec.subsets[1].patch",
				`Invalid value: "-1": must be greater than or equal to 0 (at spec.containers[0].resources.requests[cpu] of the subset's pod template)`}}},
		{name: "patch with a label value that is not one", ws: spreadOf("spread", ns, "job", "zone-a"),
			change: func(ws *musterv1.WorkloadSpread) {
				ws.Spec.Subsets[0].Patch = patch(`{"metadata":{"labels":{"zone":"not a label!"}}}`)
			},
			want: []refusal{{"spec.subsets[0].patch",
				`Invalid value: "not a label!": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?') (at metadata.labels of the subset's pod template)`}}},
		{name: "toleration the pods may not have", ws: spreadOf("spread", ns, "job", "zone-a"),
			change: func(ws *musterv1.WorkloadSpread) {
				ws.Spec.Subsets[0].Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists, Value: "yes"}}
			},
			want: []refusal{{"spec.subsets[0].tolerations[0].operator",
				`Invalid value: "yes": value must be empty when ` + "`operator` is 'Exists' (at spec.tolerations[0].operator of the subset's pod template)"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.change != nil {
				tc.change(tc.ws)
			}
			expectRefused(t, tc.ws, tc.want)
		})
	}
	t.Run("valid subsets", func(t *testing.T) {
		ws := spreadOf("spread", ns, "job", "zone-a", "zone-b")
		ws.Spec.Subsets[0].Patch = patch(`{"metadata":{"labels":{"zone":"a"}},"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"1"}}}]}}`)
		expectAdmitted(t, ws)
	})
	t.Run("a long subset name of an Indexed FleetJob with a long name", func(t *testing.T) {
		other := strings.Repeat("g", 55)
		expectAdmitted(t, fleetJob(other, ns, indexed(10)))
		expectAdmitted(t, spreadOf("long", ns, other, strings.Repeat("z", 42)))
	})
	t.Run("an update that breaks a subset", func(t *testing.T) {
		ws := spreadOf("later", ns, long, "a")
		expectAdmitted(t, ws)
		ws.Spec.Subsets[0].Patch = patch(negativeCPUPatch)
		err := env.Client.Update(t.Context(), ws)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.subsets[0].patch") {
			t.Fatalf("update error = %v, want the patch refused", err)
		}
	})
}

// TestFleetJobIsCheckedThroughItsSpread: a FleetJob created after the WorkloadSpread that
// targets it is refused when a subset would make a Job the members refuse.
func TestFleetJobIsCheckedThroughItsSpread(t *testing.T) {
	ns := env.Namespace(t)
	ws := spreadOf("spread", ns, "job", "zone-a", "zone-b")
	ws.Spec.Subsets[1].Patch = patch(negativeCPUPatch)
	expectAdmitted(t, ws) // the target does not exist yet
	expectRefused(t, fleetJob("job", ns, nil), []refusal{{"spec.template.spec.template.spec.containers[0].resources.requests[cpu]",
		`Invalid value: "-1": must be greater than or equal to 0 (in the Job of subset zone-b of WorkloadSpread spread)`}})

	// A subset's Job leaves room for any completion index, whatever the names.
	long := strings.Repeat("e", 55)
	expectAdmitted(t, spreadOf("long", ns, long, "zone-a"))
	expectAdmitted(t, fleetJob(long, ns, indexed(10)))

	// Without the spread's subsets in the way, both are valid.
	expectAdmitted(t, fleetJob("other", ns, nil))
	expectAdmitted(t, fleetJob(strings.Repeat("f", 55), ns, indexed(10)))
}
