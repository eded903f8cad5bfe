package fleetsim

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ChurnLabel is the label Churn changes on a node, as a node's own labels change when
// its kubelet or an operator relabels it.
const ChurnLabel = "fleetsim.muster.dev/revision"

// machine is one instance type of the simulated node pools.
type machine struct {
	instanceType, cpu, memory string
}

var machines = []machine{
	{"m6i.2xlarge", "7910m", "30Gi"},
	{"m6i.4xlarge", "15890m", "61Gi"},
	{"c6i.8xlarge", "31850m", "60Gi"},
}

var zones = []string{"a", "b", "c"}

// Nodes builds n nodes of a member cluster, deterministically from their index, as a
// cloud node pool shows them to placement: hostname, OS, architecture (one in ten
// arm64), instance type and zone labels; every twentieth node tainted for dedicated GPU
// work; allocatable CPU, memory and pods by instance type; one in a hundred not Ready and
// one in two hundred cordoned.
func Nodes(cluster string, n int) []corev1.Node {
	nodes := make([]corev1.Node, n)
	for i := range nodes {
		m := machines[i%len(machines)]
		name := fmt.Sprintf("%s-node-%05d", cluster, i)
		arch := "amd64"
		if i%10 == 9 {
			arch = "arm64"
		}
		node := corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
				corev1.LabelHostname:           name,
				corev1.LabelOSStable:           "linux",
				corev1.LabelArchStable:         arch,
				corev1.LabelInstanceTypeStable: m.instanceType,
				corev1.LabelTopologyRegion:     "sim-region-1",
				corev1.LabelTopologyZone:       "sim-region-1" + zones[(i/len(machines))%len(zones)],
				ChurnLabel:                     "0",
			}},
			Spec: corev1.NodeSpec{Unschedulable: i%200 == 199},
			Status: corev1.NodeStatus{
				Allocatable: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse(m.cpu),
					corev1.ResourceMemory: resource.MustParse(m.memory),
					corev1.ResourcePods:   resource.MustParse("110"),
				},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready(i)}},
			},
		}
		if i%20 == 19 {
			node.Spec.Taints = []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}
		}
		nodes[i] = node
	}
	return nodes
}

func ready(i int) corev1.ConditionStatus {
	if i%100 == 99 {
		return corev1.ConditionFalse
	}
	return corev1.ConditionTrue
}

// revision is the value of ChurnLabel after the given round of churn.
func revision(round int) string { return strconv.Itoa(round) }
