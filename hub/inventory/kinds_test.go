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

// mixedNodes returns n nodes that differ in every way fitness reads: unique hostnames,
// numeric and other gen values, pools, readiness, cordons, taints, and allocatable lists
// equal in value but not in form.
func mixedNodes(n int) []musterv1.NodeInfo {
	nodes := make([]musterv1.NodeInfo, n)
	for i := range nodes {
		name := fmt.Sprintf("m%03d", i)
		nodes[i] = nodeInfo(name, func(info *musterv1.NodeInfo) {
			info.Labels = map[string]string{"kubernetes.io/hostname": name, "gen": []string{"1", "2", "3", "5", "8", "x"}[i%6]}
			if i%5 != 0 {
				info.Labels["pool"] = []string{"general", "gpu", "spot", ""}[i%4]
			}
			info.Ready = i%11 != 0
			info.Unschedulable = i%13 == 0
			switch i % 7 {
			case 1:
				info.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
			case 2:
				info.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}, {Key: "spot", Effect: corev1.TaintEffectNoExecute}}
			case 3:
				info.Taints = []corev1.Taint{{Key: "spot", Effect: corev1.TaintEffectPreferNoSchedule, TimeAdded: &metav1.Time{}}}
			case 4:
				info.Taints = []corev1.Taint{{Key: "dedicated", Value: "cpu", Effect: corev1.TaintEffectNoSchedule}}
			case 5:
				info.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectPreferNoSchedule}}
			}
			info.Allocatable[corev1.ResourceCPU] = resource.MustParse([]string{"4", "4000m", "2", "500m"}[i%4])
			if i%9 == 0 {
				delete(info.Allocatable, corev1.ResourceMemory)
			}
			// 110 reads "110" in either format; sums keep the format.
			info.Allocatable[corev1.ResourcePods] = *resource.NewQuantity(110, []resource.Format{resource.DecimalSI, resource.BinarySI}[i%8/4])
		})
	}
	return nodes
}

// TestEligibleNodesByKindAnswerAsTheScan asks templates broad enough that fitting checks
// one node per kind, and selective ones that it checks node by node, of slices whose nodes
// differ in everything fitness reads.
func TestEligibleNodesByKindAnswerAsTheScan(t *testing.T) {
	inv := New()
	must(t, inv.ReplaceSlice("c2", slice("c2", "s0", mixedNodes(96)...)))
	must(t, inv.ReplaceSlice("c2", slice("c2", "s1", mixedNodes(200)[96:]...)))
	must(t, inv.ReplaceSlice("c1", slice("c1", "s0", mixedNodes(40)...)))
	cpu := func(q string) func(*corev1.PodSpec) {
		return func(p *corev1.PodSpec) {
			p.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
		}
	}
	tolerate := func(key string) func(*corev1.PodSpec) {
		return func(p *corev1.PodSpec) {
			p.Tolerations = append(p.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists})
		}
	}
	host := "kubernetes.io/hostname"
	cases := map[string]*corev1.PodSpec{
		"no selector":                  podSpec(),
		"a pool":                       podSpec(selector("pool", "general")),
		"the empty pool":               podSpec(selector("pool", "")),
		"a pool, tolerating dedicated": podSpec(selector("pool", "gpu"), tolerate("dedicated")),
		"tolerating both taints":       podSpec(tolerate("dedicated"), tolerate("spot")),
		"tolerating the cordon":        podSpec(tolerate(corev1.TaintNodeUnschedulable)),
		"requests all allocatable":     podSpec(cpu("4")),
		"requests a little":            podSpec(cpu("1"), selector("pool", "spot")),
		"requests memory": podSpec(func(p *corev1.PodSpec) {
			p.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
		}),
		"gen Gt":                          podSpec(required(term(expr("gen", corev1.NodeSelectorOpGt, "2")))),
		"gen Lt in a pool":                podSpec(required(term(expr("gen", corev1.NodeSelectorOpLt, "5"), expr("pool", corev1.NodeSelectorOpIn, "general", "spot")))),
		"gen Gt without an integer":       podSpec(required(term(expr("gen", corev1.NodeSelectorOpGt, "x")))),
		"an unknown operator":             podSpec(required(term(expr("gen", "Like", "1")))),
		"two hosts":                       podSpec(required(term(expr(host, corev1.NodeSelectorOpIn, "m001", "m150")))),
		"all hosts but two":               podSpec(required(term(expr(host, corev1.NodeSelectorOpNotIn, "m001", "m150")))),
		"hosts or a gen":                  podSpec(required(term(expr(host, corev1.NodeSelectorOpIn, "m002")), term(expr("gen", corev1.NodeSelectorOpIn, "3")))),
		"no pool":                         podSpec(required(term(expr("pool", corev1.NodeSelectorOpDoesNotExist)))),
		"a pool exists, not gpu":          podSpec(required(term(expr("pool", corev1.NodeSelectorOpExists), expr("pool", corev1.NodeSelectorOpNotIn, "gpu")))),
		"selector and a NotIn on its key": podSpec(selector("pool", "spot"), required(term(expr("pool", corev1.NodeSelectorOpNotIn, "gpu")))),
		"an invalid key":                  podSpec(required(term(expr("not a key!", corev1.NodeSelectorOpExists)), term(expr("gen", corev1.NodeSelectorOpIn, "1")))),
		"a node by name":                  podSpec(func(p *corev1.PodSpec) { p.NodeName = "m003" }),
		"names not one":                   podSpec(required(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"m004"}}}})),
	}
	for name, spec := range cases {
		t.Run(name, func(t *testing.T) { expectSameAsScan(t, inv, spec) })
	}
}

func TestTraitsShareEqualLists(t *testing.T) {
	inv := New()
	infos := mixedNodes(30)
	must(t, inv.ReplaceSlice("c0", slice("c0", "s0", mixedNodes(30)...)))
	nodes := inv.Nodes("c0")
	for i, n := range nodes {
		if diff := cmp.Diff(infos[i].Taints, n.Spec.Taints); diff != "" {
			t.Errorf("%s's taints (-reported +held):\n%s", n.Name, diff)
		}
		if diff := cmp.Diff(infos[i].Allocatable, n.Status.Allocatable); diff != "" {
			t.Errorf("%s's allocatable (-reported +held):\n%s", n.Name, diff)
		}
		if got, want := n.Status.Allocatable.Pods().Format, infos[i].Allocatable.Pods().Format; got != want {
			t.Errorf("%s's pods are held in format %s, reported in %s", n.Name, got, want)
		}
	}
	same := func(a, b *corev1.Node) bool {
		return fmt.Sprintf("%p", a.Status.Allocatable) == fmt.Sprintf("%p", b.Status.Allocatable)
	}
	// m001, m004, m005, m008 and m012 have cpu 4 (m001 and m005 write 4000m, canonically
	// 4) and memory; m004, m005 and m012 have their pods in the binary format, m001 and m008
	// in the decimal one. m000 has no memory; m002 has cpu 2.
	if !same(nodes[4], nodes[5]) || !same(nodes[4], nodes[12]) || !same(nodes[1], nodes[8]) {
		t.Errorf("m004, m005 and m012 have equal allocatable lists, and m001 and m008, want one map each")
	}
	if same(nodes[4], nodes[8]) || same(nodes[4], nodes[2]) || same(nodes[8], nodes[0]) {
		t.Errorf("allocatable lists with other formats, quantities or resources share a map")
	}
	if &nodes[2].Spec.Taints[0] != &nodes[9].Spec.Taints[0] {
		t.Errorf("m002 and m009 have equal taints, want one list")
	}
	if &nodes[2].Spec.Taints[0] == &nodes[1].Spec.Taints[0] {
		t.Errorf("m001 and m002 have other taints, want other lists")
	}
}
