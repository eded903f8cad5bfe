package v1alpha1_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// applyTaints server-side applies, as manager, a MemberCluster whose only taints are
// taints ("key:effect").
func applyTaints(t *testing.T, name, manager string, taints ...string) {
	t.Helper()
	list := []any{}
	for _, kv := range taints {
		key, effect, _ := strings.Cut(kv, ":")
		list = append(list, map[string]any{"key": key, "effect": effect})
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": musterv1.GroupVersion.String(), "kind": "MemberCluster",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"taints": list},
	}}
	if err := env.Client.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(manager)); err != nil {
		t.Fatalf("%s applying taints %v: %v", manager, taints, err)
	}
}

// taintsOf are a MemberCluster's taints as "key:effect", sorted.
func taintsOf(t *testing.T, name string) []string {
	t.Helper()
	mc := &musterv1.MemberCluster{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: name}, mc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, taint := range mc.Spec.Taints {
		out = append(out, fmt.Sprintf("%s:%s", taint.Key, taint.Effect))
	}
	slices.Sort(out)
	return out
}

// TestTaintsOfSeveralManagers: a MemberCluster's taints are a map keyed by key and effect
// (its spec.taints doc), so an administrator's taints and the hub's unreachable taint,
// each server-side applied by its own manager, coexist, and each removes only its own.
func TestTaintsOfSeveralManagers(t *testing.T) {
	const name = "apply-taints"
	unreachable := musterv1.UnreachableTaintKey + ":NoSchedule"
	applyTaints(t, name, "admin", "maintenance:NoSchedule", "gpu:PreferNoSchedule")
	applyTaints(t, name, "muster-hub", unreachable)
	if got, want := taintsOf(t, name), []string{"gpu:PreferNoSchedule", "maintenance:NoSchedule", unreachable}; !slices.Equal(got, want) {
		t.Fatalf("taints after both applied = %v, want %v", got, want)
	}
	// One key with another effect is another taint, owned by whoever applied it.
	applyTaints(t, name, "muster-hub", unreachable, "maintenance:NoExecute")
	applyTaints(t, name, "admin", "gpu:PreferNoSchedule")
	if got, want := taintsOf(t, name), []string{"gpu:PreferNoSchedule", "maintenance:NoExecute", unreachable}; !slices.Equal(got, want) {
		t.Fatalf("taints after the administrator dropped maintenance:NoSchedule = %v, want %v", got, want)
	}
	applyTaints(t, name, "muster-hub")
	if got, want := taintsOf(t, name), []string{"gpu:PreferNoSchedule"}; !slices.Equal(got, want) {
		t.Fatalf("taints after the hub dropped its own = %v, want %v", got, want)
	}
}

// TestGeneratedNames: a name the API server generates from metadata.generateName meets
// the kind's name limit as a given name must. It cuts the prefix to 58 characters before
// adding five random ones, so any prefix makes an admissible FleetJob, BroadcastJob or
// Work (63); a FleetCronJob (52) is refused once the prefix is longer than 47.
func TestGeneratedNames(t *testing.T) {
	cases := []struct {
		sample string
		prefix int
		// name is the generated name's length; 0 when the object is refused with want.
		name int
		want string
	}{
		{"fleetjob", 200, 63, ""},
		{"broadcastjob", 200, 63, ""},
		{"work", 200, 63, ""},
		{"fleetcronjob", 47, 52, ""},
		{"fleetcronjob", 48, 0, "FleetCronJob name must be at most 52 characters"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%d", tc.sample, tc.prefix), func(t *testing.T) {
			ctx := t.Context()
			u := sample(t, tc.sample)
			isolate(t, ctx, u)
			u.SetName("")
			u.SetGenerateName(chars(tc.prefix))
			err := env.Client.Create(ctx, u)
			if tc.name == 0 {
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error = %v, want one containing %q", err, tc.want)
				}
				return
			}
			if err != nil || len(u.GetName()) != tc.name {
				t.Fatalf("name %q, error %v; want a name of %d characters admitted", u.GetName(), err, tc.name)
			}
		})
	}
}

// TestNodeSliceFieldsManagedAsOneList: an agent replaces its NodeSlices whole, so the API
// server tracks a slice's nodes as one field. Tracked per node, managedFields would repeat
// every node's name and label keys, doubling what each slice stores and each churn write
// carries.
func TestNodeSliceFieldsManagedAsOneList(t *testing.T) {
	ns := env.Namespace(t)
	slice := &musterv1.NodeSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "member1-0", Namespace: ns},
		ClusterName: "member1",
	}
	for i := range musterv1.MaxNodesPerSlice {
		slice.Nodes = append(slice.Nodes, musterv1.NodeInfo{
			Name: fmt.Sprintf("member1-node-%05d", i), Ready: true,
			Labels:      map[string]string{corev1.LabelHostname: fmt.Sprintf("member1-node-%05d", i), corev1.LabelTopologyZone: "a"},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
		})
	}
	if err := env.Client.Create(t.Context(), slice); err != nil {
		t.Fatal(err)
	}
	slice.Nodes[7].Labels[corev1.LabelTopologyZone] = "b"
	if err := env.Client.Update(t.Context(), slice); err != nil {
		t.Fatal(err)
	}
	managed, err := json.Marshal(slice.ManagedFields)
	if err != nil {
		t.Fatal(err)
	}
	if len(managed) > 1024 {
		t.Errorf("managedFields of a %d-node slice are %d bytes, want at most 1 KiB whatever the nodes: %.300s",
			len(slice.Nodes), len(managed), managed)
	}
}
