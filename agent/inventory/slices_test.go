package inventory

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
