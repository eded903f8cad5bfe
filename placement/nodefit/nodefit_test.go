package nodefit

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func node(name string, mutate ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name, "pool": "general"}},
		Status: corev1.NodeStatus{
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")},
		},
	}
	for _, m := range mutate {
		m(n)
	}
	return n
}

func pod(mutate ...func(*corev1.PodSpec)) *corev1.PodSpec {
	p := &corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
	}}}}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func taint(key string, effect corev1.TaintEffect) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Value: "x", Effect: effect})
	}
}

func tolerate(key string, effect corev1.TaintEffect) func(*corev1.PodSpec) {
	return func(p *corev1.PodSpec) {
		p.Tolerations = append(p.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: effect})
	}
}

func requestCPU(q string) func(*corev1.PodSpec) {
	return func(p *corev1.PodSpec) {
		p.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse(q)
	}
}

func cordoned(n *corev1.Node) { n.Spec.Unschedulable = true }

func TestCheck(t *testing.T) {
	cases := []struct {
		name string
		pod  *corev1.PodSpec
		node *corev1.Node
		want Reason
	}{
		{name: "plain pod on a plain node", pod: pod(), node: node("n1"), want: Fits},
		{name: "nodeName pins another node", pod: pod(func(p *corev1.PodSpec) { p.NodeName = "n2" }), node: node("n1"), want: NodeNameMismatch},
		{name: "nodeName pins this node", pod: pod(func(p *corev1.PodSpec) { p.NodeName = "n1" }), node: node("n1"), want: Fits},
		{name: "nodeSelector matches", pod: pod(func(p *corev1.PodSpec) { p.NodeSelector = map[string]string{"pool": "general"} }), node: node("n1"), want: Fits},
		{name: "nodeSelector does not match", pod: pod(func(p *corev1.PodSpec) { p.NodeSelector = map[string]string{"pool": "gpu"} }), node: node("n1"), want: NodeAffinityMismatch},
		{
			name: "required node affinity on a field",
			pod: pod(func(p *corev1.PodSpec) {
				p.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n2"}}}}},
				}}}
			}),
			node: node("n1"), want: NodeAffinityMismatch,
		},
		{
			name: "preferred affinity never excludes",
			pod: pod(func(p *corev1.PodSpec) {
				p.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
					Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"gpu"}}}},
				}}}}
			}),
			node: node("n1"), want: Fits,
		},
		{name: "untolerated NoSchedule taint", pod: pod(), node: node("n1", taint("dedicated", corev1.TaintEffectNoSchedule)), want: UntoleratedTaint},
		{name: "untolerated NoExecute taint", pod: pod(), node: node("n1", taint("dedicated", corev1.TaintEffectNoExecute)), want: UntoleratedTaint},
		{name: "PreferNoSchedule taint does not exclude", pod: pod(), node: node("n1", taint("dedicated", corev1.TaintEffectPreferNoSchedule)), want: Fits},
		{name: "tolerated taint", pod: pod(tolerate("dedicated", corev1.TaintEffectNoSchedule)), node: node("n1", taint("dedicated", corev1.TaintEffectNoSchedule)), want: Fits},
		{name: "cordoned node", pod: pod(), node: node("n1", cordoned), want: NodeUnschedulable},
		{name: "cordoned node with the unschedulable toleration", pod: pod(tolerate(corev1.TaintNodeUnschedulable, corev1.TaintEffectNoSchedule)), node: node("n1", cordoned), want: Fits},
		{name: "not ready node", pod: pod(), node: node("n1", func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }), want: NodeNotReady},
		{name: "node without a Ready condition", pod: pod(), node: node("n1", func(n *corev1.Node) { n.Status.Conditions = nil }), want: NodeNotReady},
		{name: "requests equal allocatable", pod: pod(requestCPU("4")), node: node("n1"), want: Fits},
		{name: "requests over allocatable", pod: pod(requestCPU("4500m")), node: node("n1"), want: InsufficientResources},
		{
			name: "requests a resource the node lacks",
			pod: pod(func(p *corev1.PodSpec) {
				p.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("1")
			}),
			node: node("n1"), want: InsufficientResources,
		},
		{
			name: "init container requests count when larger",
			pod: pod(func(p *corev1.PodSpec) {
				p.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5")}}}}
			}),
			node: node("n1"), want: InsufficientResources,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, detail := NewTemplate(tc.pod).Explain(tc.node)
			if got != tc.want {
				t.Errorf("Explain() = %q (%s), want %q", got, detail, tc.want)
			}
			if (got == Fits) != (detail == "") {
				t.Errorf("Explain() detail %q does not agree with reason %q", detail, got)
			}
		})
	}
}

func TestKeeps(t *testing.T) {
	notReady := func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }
	relabel := func(n *corev1.Node) { n.Labels["pool"] = "gpu" }
	cases := []struct {
		name string
		pod  *corev1.PodSpec
		node *corev1.Node
		want bool
	}{
		{name: "plain node", pod: pod(), node: node("n1"), want: true},
		{name: "cordoned node keeps its pods", pod: pod(), node: node("n1", cordoned), want: true},
		{name: "not ready node keeps its pods", pod: pod(), node: node("n1", notReady), want: true},
		{name: "NoSchedule taint does not evict", pod: pod(), node: node("n1", taint("dedicated", corev1.TaintEffectNoSchedule)), want: true},
		{name: "requests over allocatable do not evict", pod: pod(requestCPU("8")), node: node("n1"), want: true},
		{name: "untolerated NoExecute taint evicts", pod: pod(), node: node("n1", taint("dedicated", corev1.TaintEffectNoExecute)), want: false},
		{name: "tolerated NoExecute taint", pod: pod(tolerate("dedicated", corev1.TaintEffectNoExecute)), node: node("n1", taint("dedicated", corev1.TaintEffectNoExecute)), want: true},
		{name: "node relabelled out of the selector", pod: pod(func(p *corev1.PodSpec) { p.NodeSelector = map[string]string{"pool": "general"} }), node: node("n1", relabel), want: false},
		{name: "nodeName pins another node", pod: pod(func(p *corev1.PodSpec) { p.NodeName = "n2" }), node: node("n1"), want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := NewTemplate(tc.pod).Keeps(tc.node); got != tc.want {
				t.Errorf("Keeps() = %v, want %v", got, tc.want)
			}
		})
	}
}

func BenchmarkCheck5000Nodes(b *testing.B) {
	nodes := make([]*corev1.Node, 5000)
	for i := range nodes {
		nodes[i] = node(fmt.Sprintf("n%d", i))
		if i%3 == 0 {
			nodes[i].Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}}
		}
		if i%5 == 0 {
			nodes[i].Labels["pool"] = "gpu"
		}
	}
	spec := pod(func(p *corev1.PodSpec) { p.NodeSelector = map[string]string{"pool": "general"} })
	b.ReportAllocs()
	for b.Loop() {
		tmpl := NewTemplate(spec)
		fit := 0
		for _, n := range nodes {
			if tmpl.Check(n) == Fits {
				fit++
			}
		}
		if fit == 0 {
			b.Fatal("no node fits")
		}
	}
}
