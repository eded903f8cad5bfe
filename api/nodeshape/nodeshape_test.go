package nodeshape

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

var gpuTaint = corev1.Taint{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}

func cpus(n string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(n), corev1.ResourcePods: resource.MustParse("110")}
}

// pool is n nodes as a cloud node pool shows them: a hostname each, zones a, b, c in
// turn, one instance type, the given taints.
func pool(prefix string, n int, cpu string, taints ...corev1.Taint) []musterv1.NodeInfo {
	var nodes []musterv1.NodeInfo
	for i := range n {
		name := fmt.Sprintf("%s-%03d", prefix, i)
		nodes = append(nodes, musterv1.NodeInfo{
			Name: name, Ready: i%7 != 6, Unschedulable: i%11 == 10, Taints: taints, Allocatable: cpus(cpu),
			Labels: map[string]string{
				corev1.LabelHostname:           name,
				corev1.LabelTopologyZone:       "zone-" + string(rune('a'+i%3)),
				corev1.LabelInstanceTypeStable: prefix,
			},
		})
	}
	return nodes
}

// withLabel sets key to value(i) on the i-th node.
func withLabel(nodes []musterv1.NodeInfo, key string, value func(i int) string) []musterv1.NodeInfo {
	for i := range nodes {
		if nodes[i].Labels == nil {
			nodes[i].Labels = map[string]string{}
		}
		nodes[i].Labels[key] = value(i)
	}
	return nodes
}

func TestSplitKeepsEveryNodeAndSharesWhatNodesHaveInCommon(t *testing.T) {
	cases := []struct {
		name       string
		nodes      []musterv1.NodeInfo
		wantShapes int
		// wantOwn are the label keys the nodes keep themselves.
		wantOwn []string
	}{
		{name: "no nodes", nodes: nil, wantShapes: 0},
		{name: "one node: all of it in its shape", nodes: pool("m6i", 1, "8"), wantShapes: 1},
		{name: "one pool over three zones", nodes: pool("m6i", 300, "8"), wantShapes: 3,
			wantOwn: []string{corev1.LabelHostname}},
		{name: "two pools, one tainted", nodes: append(pool("m6i", 200, "8"), pool("p4d", 100, "96", gpuTaint)...), wantShapes: 6,
			wantOwn: []string{corev1.LabelHostname}},
		{name: "nodes without labels, taints or resources", nodes: []musterv1.NodeInfo{{Name: "a"}, {Name: "b", Ready: true}}, wantShapes: 1},
		{name: "a key of 8 values stays in shapes", nodes: withLabel(pool("m6i", 24, "8"), "rack", func(i int) string { return fmt.Sprint(i % 8) }),
			wantShapes: 24, wantOwn: []string{corev1.LabelHostname}},
		{name: "a key of 9 values is each node's own", nodes: withLabel(pool("m6i", 27, "8"), "rack", func(i int) string { return fmt.Sprint(i % 9) }),
			wantShapes: 3, wantOwn: []string{corev1.LabelHostname, "rack"}},
		{name: "the same resources written two ways are two shapes", nodes: []musterv1.NodeInfo{
			{Name: "a", Allocatable: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
			{Name: "b", Allocatable: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1073741824")}},
		}, wantShapes: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			shapes, nodes := Split(tc.nodes)
			if len(shapes) != tc.wantShapes {
				t.Errorf("%d shapes, want %d", len(shapes), tc.wantShapes)
			}
			own := map[string]bool{}
			var resolved []musterv1.NodeInfo
			for i := range nodes {
				if nodes[i].Shape == nil {
					t.Fatalf("node %s names no shape", nodes[i].Name)
				}
				for k := range nodes[i].Labels {
					own[k] = true
				}
				resolved = append(resolved, Resolve(&nodes[i], shapes))
			}
			if diff := cmp.Diff(tc.wantOwn, sortedKeys(own), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("label keys nodes keep themselves (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.nodes, resolved, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("nodes resolved from their shapes (-want +got):\n%s", diff)
			}
			again, _ := Split(tc.nodes)
			if diff := cmp.Diff(shapes, again); diff != "" {
				t.Errorf("the same nodes split again (-first +second):\n%s", diff)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	shapes := []musterv1.NodeShape{{
		Labels: map[string]string{"zone": "a", "pool": "general"}, Taints: []corev1.Taint{gpuTaint}, Allocatable: cpus("8"),
	}}
	cordon := corev1.Taint{Key: "node.kubernetes.io/unschedulable", Effect: corev1.TaintEffectNoSchedule}
	cases := []struct {
		name string
		node musterv1.NodeInfo
		want musterv1.NodeInfo
	}{{
		name: "its shape's, with its own labels added",
		node: musterv1.NodeInfo{Name: "n", Shape: ptr.To[int32](0), Labels: map[string]string{"host": "n"}, Ready: true},
		want: musterv1.NodeInfo{Name: "n", Ready: true, Labels: map[string]string{"zone": "a", "pool": "general", "host": "n"},
			Taints: []corev1.Taint{gpuTaint}, Allocatable: cpus("8")},
	}, {
		name: "its own label, taint and resource over its shape's",
		node: musterv1.NodeInfo{Name: "n", Shape: ptr.To[int32](0), Labels: map[string]string{"zone": "b"}, Taints: []corev1.Taint{cordon},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}, Unschedulable: true},
		want: musterv1.NodeInfo{Name: "n", Unschedulable: true, Labels: map[string]string{"zone": "b", "pool": "general"},
			Taints:      []corev1.Taint{gpuTaint, cordon},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("110")}},
	}, {
		name: "no shape: the node as it is",
		node: musterv1.NodeInfo{Name: "n", Labels: map[string]string{"zone": "c"}, Allocatable: cpus("2")},
		want: musterv1.NodeInfo{Name: "n", Labels: map[string]string{"zone": "c"}, Allocatable: cpus("2")},
	}, {
		name: "a shape the slice does not have: the node as it is",
		node: musterv1.NodeInfo{Name: "n", Shape: ptr.To[int32](1), Labels: map[string]string{"zone": "c"}},
		want: musterv1.NodeInfo{Name: "n", Shape: ptr.To[int32](1), Labels: map[string]string{"zone": "c"}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Resolve(&tc.node, shapes)); diff != "" {
				t.Errorf("resolved (-want +got):\n%s", diff)
			}
		})
	}
	if len(shapes[0].Taints) != 1 || len(shapes[0].Labels) != 2 || len(shapes[0].Allocatable) != 2 {
		t.Errorf("resolving wrote into the shape: %+v", shapes[0])
	}
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
