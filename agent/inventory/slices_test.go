package inventory

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/musterhq/muster/api/nodeshape"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func testNode(name string, ready, cordoned bool, cpu string) corev1.Node {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.NodeSpec{Unschedulable: cordoned},
		Status: corev1.NodeStatus{
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
		},
	}
}

func TestBuildSlices(t *testing.T) {
	cases := []struct {
		nodes      int
		wantSlices []int
	}{
		{nodes: 0, wantSlices: nil},
		{nodes: 1, wantSlices: []int{1}},
		{nodes: 500, wantSlices: []int{500}},
		{nodes: 501, wantSlices: []int{500, 1}},
		{nodes: 1234, wantSlices: []int{500, 500, 234}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.nodes), func(t *testing.T) {
			var nodes []corev1.Node
			// Reverse order: slices must come out sorted by node name regardless.
			for i := tc.nodes - 1; i >= 0; i-- {
				nodes = append(nodes, testNode(fmt.Sprintf("n%05d", i), true, false, "1"))
			}
			slices := BuildSlices("c1", nodes)
			var sizes []int
			next := 0
			for i, s := range slices {
				sizes = append(sizes, len(s.Nodes))
				if int(s.NodeCount) != len(s.Nodes) {
					t.Errorf("slice %d says nodeCount %d for %d nodes", i, s.NodeCount, len(s.Nodes))
				}
				if s.Name != fmt.Sprintf("c1-%d", i) || s.Namespace != "muster-member-c1" || s.ClusterName != "c1" {
					t.Errorf("slice %d is %s/%s for %s", i, s.Namespace, s.Name, s.ClusterName)
				}
				for _, n := range s.Nodes {
					if want := fmt.Sprintf("n%05d", next); n.Name != want {
						t.Fatalf("slice %d holds %s where %s belongs", i, n.Name, want)
					}
					next++
				}
			}
			if diff := cmp.Diff(tc.wantSlices, sizes); diff != "" {
				t.Errorf("slice sizes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuildSlicesResolveToTheNodes: the hub, resolving each node of a slice from its
// shape, reads what the agent read from its nodes; the labels nodes of a pool share are
// written once per shape, the hostname by each node.
func TestBuildSlicesResolveToTheNodes(t *testing.T) {
	var nodes []corev1.Node
	for i := range 1234 {
		n := testNode(fmt.Sprintf("n%05d", i), i%9 != 8, i%13 == 12, "4")
		n.Labels = map[string]string{corev1.LabelHostname: n.Name, corev1.LabelTopologyZone: fmt.Sprintf("z%d", i%3)}
		if i%20 == 19 {
			n.Spec.Taints = []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}}
		}
		nodes = append(nodes, n)
	}
	var resolved []musterv1.NodeInfo
	for _, s := range BuildSlices("c1", nodes) {
		if len(s.Shapes) > 6 {
			t.Errorf("slice %s has %d shapes, want at most 6 (three zones, with and without the taint)", s.Name, len(s.Shapes))
		}
		for i := range s.Nodes {
			if got := s.Nodes[i].Labels; len(got) != 1 || got[corev1.LabelHostname] != s.Nodes[i].Name {
				t.Errorf("node %s keeps labels %v itself, want only its hostname", s.Nodes[i].Name, got)
			}
			resolved = append(resolved, nodeshape.Resolve(&s.Nodes[i], s.Shapes))
		}
	}
	var want []musterv1.NodeInfo
	for i := range nodes {
		want = append(want, nodeInfo(&nodes[i]))
	}
	if diff := cmp.Diff(want, resolved); diff != "" {
		t.Errorf("nodes as the hub resolves them (-want +got):\n%s", diff)
	}
}

func TestSummarize(t *testing.T) {
	counts, alloc := Summarize([]corev1.Node{
		testNode("a", true, false, "4"),
		testNode("b", true, true, "2"),
		testNode("c", false, false, "8"),
	})
	if diff := cmp.Diff(musterv1.NodeCounts{Total: 3, Ready: 2, Schedulable: 1}, counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if got := alloc[corev1.ResourceCPU]; got.Cmp(resource.MustParse("6")) != 0 {
		t.Errorf("allocatable CPU = %s, want 6 (ready nodes only)", got.String())
	}
}

// TestDiffers: a slice is written again when its nodes or their shapes changed, and only
// then; a rewrite keeps the stored object's identity and takes the new content.
func TestDiffers(t *testing.T) {
	node := func(zone string) corev1.Node {
		n := testNode("n0", true, false, "4")
		n.Labels = map[string]string{corev1.LabelTopologyZone: zone}
		return n
	}
	stored := BuildSlices("c1", []corev1.Node{node("a")})[0]
	stored.ResourceVersion = "7"
	cases := []struct {
		name string
		want musterv1.NodeSlice
		diff bool
	}{
		{"the same nodes", BuildSlices("c1", []corev1.Node{node("a")})[0], false},
		{"a label of the node's shape changed", BuildSlices("c1", []corev1.Node{node("b")})[0], true},
		{"a node more", BuildSlices("c1", []corev1.Node{node("a"), testNode("n1", true, false, "4")})[0], true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Differs(&stored, &tc.want); got != tc.diff {
				t.Fatalf("Differs = %t, want %t", got, tc.diff)
			}
			rewritten := Rewritten(&stored, &tc.want)
			if rewritten.ResourceVersion != "7" || Differs(rewritten, &tc.want) {
				t.Errorf("rewritten slice: resourceVersion %q (want 7), differs from what was wanted: %t",
					rewritten.ResourceVersion, Differs(rewritten, &tc.want))
			}
		})
	}
}
