package webhook_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// defaultTolerationSeconds is the suite's --default-unreachable-toleration-seconds.
const defaultTolerationSeconds = 120

// TestANewFleetJobGetsTheDefaultTolerationOfAnUnreachableCluster, visible in the object
// as kube-apiserver's default tolerations are in a pod; a FleetJob that says how long it
// tolerates the taint keeps what it says, and an update adds nothing.
func TestANewFleetJobGetsTheDefaultTolerationOfAnUnreachableCluster(t *testing.T) {
	ns := env.Namespace(t)
	unreachable := func(fj *musterv1.FleetJob) []corev1.Toleration {
		var out []corev1.Toleration
		for _, tol := range fj.Spec.Placement.Tolerations {
			if tol.Key == musterv1.UnreachableTaintKey {
				out = append(out, tol)
			}
		}
		return out
	}

	plain := fleetJob("plain", ns, nil)
	if err := env.Client.Create(t.Context(), plain); err != nil {
		t.Fatal(err)
	}
	got := unreachable(plain)
	if len(got) != 1 || got[0].Effect != corev1.TaintEffectNoExecute || got[0].Operator != corev1.TolerationOpExists || got[0].TolerationSeconds == nil || *got[0].TolerationSeconds != defaultTolerationSeconds {
		t.Errorf("a FleetJob without tolerations was admitted with %+v, want unreachable:NoExecute for %ds", got, defaultTolerationSeconds)
	}

	forever := fleetJob("forever", ns, func(fj *musterv1.FleetJob) {
		fj.Spec.Placement.Tolerations = []corev1.Toleration{{Key: musterv1.UnreachableTaintKey, Operator: corev1.TolerationOpExists}}
	})
	if err := env.Client.Create(t.Context(), forever); err != nil {
		t.Fatal(err)
	}
	if got := unreachable(forever); len(got) != 1 || got[0].TolerationSeconds != nil {
		t.Errorf("a FleetJob tolerating the taint for good was admitted with %+v", got)
	}

	// The user removes the default: an update leaves the object as written.
	patch := client.MergeFrom(plain.DeepCopy())
	plain.Spec.Placement.Tolerations = nil
	if err := env.Client.Patch(t.Context(), plain, patch); err != nil {
		t.Fatal(err)
	}
	if got := unreachable(plain); len(got) != 0 {
		t.Errorf("an update put back %+v", got)
	}
}

// TestTheDefaultChangesNothingElse: the defaulter's patch only adds the toleration, so a
// FleetJob without a Job template is still refused with the CRD's own message, not one
// about fields a re-marshalled object would have set to null.
func TestTheDefaultChangesNothingElse(t *testing.T) {
	empty := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": musterv1.GroupVersion.String(), "kind": "FleetJob",
		"metadata": map[string]any{"name": "empty-template", "namespace": env.Namespace(t)},
		"spec":     map[string]any{"template": map[string]any{}},
	}}
	err := env.Client.Create(t.Context(), empty)
	if err == nil || !strings.Contains(err.Error(), "spec.template.spec: Required value") {
		t.Errorf("a FleetJob with an empty template: %v; want the CRD's Required value on spec.template.spec", err)
	}
}

// TestANewBroadcastJobWithAPlacementGetsTheDefaultToleration; one without a placement runs
// in the cluster it is created in and gets none: a placement would send it to the fleet.
func TestANewBroadcastJobWithAPlacementGetsTheDefaultToleration(t *testing.T) {
	ns := env.Namespace(t)
	placed := broadcastJob("placed", ns, nil)
	placed.Spec.Placement = &musterv1.Placement{}
	if err := env.Client.Create(t.Context(), placed); err != nil {
		t.Fatal(err)
	}
	if got := placed.Spec.Placement.Tolerations; len(got) != 1 || got[0].Key != musterv1.UnreachableTaintKey || got[0].TolerationSeconds == nil || *got[0].TolerationSeconds != defaultTolerationSeconds {
		t.Errorf("a placed BroadcastJob was admitted with tolerations %+v, want unreachable:NoExecute for %ds", got, defaultTolerationSeconds)
	}
	local := broadcastJob("local", ns, nil)
	local.Spec.Placement = nil
	if err := env.Client.Create(t.Context(), local); err != nil {
		t.Fatal(err)
	}
	if local.Spec.Placement != nil {
		t.Errorf("a BroadcastJob without a placement was admitted with one: %+v", local.Spec.Placement)
	}
}
