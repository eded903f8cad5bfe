package inventory

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/musterhq/muster/api/nodeshape"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// SliceName names the i-th NodeSlice of a cluster.
func SliceName(cluster string, i int) string { return fmt.Sprintf("%s-%d", cluster, i) }

// BuildSlices lays nodes, sorted by name, into slices of at most MaxNodesPerSlice, each
// carrying what its nodes have in common once (nodeshape). Sorting keeps a node in the
// same slice across reports, so one node's change rewrites one slice.
func BuildSlices(cluster string, nodes []corev1.Node) []musterv1.NodeSlice {
	infos := make([]musterv1.NodeInfo, 0, len(nodes))
	for i := range nodes {
		infos = append(infos, nodeInfo(&nodes[i]))
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Name < infos[j].Name })
	var slices []musterv1.NodeSlice
	for i := 0; i < len(infos); i += musterv1.MaxNodesPerSlice {
		end := min(i+musterv1.MaxNodesPerSlice, len(infos))
		shapes, nodes := nodeshape.Split(infos[i:end])
		slices = append(slices, musterv1.NodeSlice{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: musterv1.MemberNamespace(cluster),
				Name:      SliceName(cluster, len(slices)),
				Labels:    map[string]string{musterv1.ClusterNameLabel: cluster},
			},
			ClusterName: cluster,
			NodeCount:   int32(end - i),
			Shapes:      shapes,
			Nodes:       nodes,
		})
	}
	return slices
}

// Differs says whether stored, a slice read from the hub, says other than want of its
// nodes: only then is it written again.
func Differs(stored, want *musterv1.NodeSlice) bool {
	return stored.ClusterName != want.ClusterName || stored.NodeCount != want.NodeCount ||
		!equality.Semantic.DeepEqual(stored.Shapes, want.Shapes) || !equality.Semantic.DeepEqual(stored.Nodes, want.Nodes)
}

// Rewritten is stored's identity (name, resource version) with want's labels and content:
// what an update of stored writes. Only the metadata is copied: the nodes are want's.
func Rewritten(stored, want *musterv1.NodeSlice) *musterv1.NodeSlice {
	out := &musterv1.NodeSlice{TypeMeta: stored.TypeMeta, ObjectMeta: *stored.ObjectMeta.DeepCopy()}
	out.Labels, out.ClusterName, out.NodeCount, out.Shapes, out.Nodes = want.Labels, want.ClusterName, want.NodeCount, want.Shapes, want.Nodes
	return out
}

func nodeInfo(n *corev1.Node) musterv1.NodeInfo {
	return musterv1.NodeInfo{
		Name:          n.Name,
		Labels:        n.Labels,
		Taints:        n.Spec.Taints,
		Allocatable:   n.Status.Allocatable,
		Unschedulable: n.Spec.Unschedulable,
		Ready:         isReady(n),
	}
}

func isReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Summarize counts nodes and sums the allocatable resources of the ready ones.
func Summarize(nodes []corev1.Node) (musterv1.NodeCounts, corev1.ResourceList) {
	var counts musterv1.NodeCounts
	total := corev1.ResourceList{}
	for i := range nodes {
		n := &nodes[i]
		counts.Total++
		if !isReady(n) {
			continue
		}
		counts.Ready++
		if !n.Spec.Unschedulable {
			counts.Schedulable++
		}
		for name, q := range n.Status.Allocatable {
			sum, ok := total[name]
			if !ok {
				sum = *resource.NewQuantity(0, q.Format)
			}
			sum.Add(q)
			total[name] = sum
		}
	}
	return counts, total
}
