package nodefit

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func requiredTerms(terms ...corev1.NodeSelectorTerm) func(*corev1.PodSpec) {
	return func(p *corev1.PodSpec) {
		p.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
		}}
	}
}

func matching(exprs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchExpressions: exprs}
}

func requirement(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func TestReads(t *testing.T) {
	noRequests := func(p *corev1.PodSpec) { p.Containers[0].Resources.Requests = nil }
	cases := []struct {
		name string
		pod  *corev1.PodSpec
		want Reads
	}{
		{"a request reads allocatable", pod(), Reads{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}},
		{"no request reads none", pod(noRequests), Reads{}},
		{"a zero request reads none", pod(requestCPU("0")), Reads{}},
		{"nodeName reads the name", pod(noRequests, func(p *corev1.PodSpec) { p.NodeName = "n1" }), Reads{Name: true}},
		{"matchFields reads the name", pod(noRequests, requiredTerms(corev1.NodeSelectorTerm{
			MatchFields: []corev1.NodeSelectorRequirement{requirement("metadata.name", corev1.NodeSelectorOpIn, "n1")},
		})), Reads{Name: true}},
		{"nodeSelector values", pod(noRequests, func(p *corev1.PodSpec) { p.NodeSelector = map[string]string{"pool": "gpu", "zone": ""} }),
			Reads{Labels: map[string]LabelRead{"pool": {Values: []string{"gpu"}}, "zone": {Values: []string{""}}}}},
		{"In, NotIn and the selector on one key", pod(noRequests, func(p *corev1.PodSpec) { p.NodeSelector = map[string]string{"pool": "gpu"} },
			requiredTerms(matching(requirement("pool", corev1.NodeSelectorOpIn, "a", "b")), matching(requirement("pool", corev1.NodeSelectorOpNotIn, "c")))),
			Reads{Labels: map[string]LabelRead{"pool": {Values: []string{"gpu", "a", "b", "c"}}}}},
		{"Exists and DoesNotExist name no value", pod(noRequests, requiredTerms(matching(
			requirement("zone", corev1.NodeSelectorOpExists), requirement("rack", corev1.NodeSelectorOpDoesNotExist)))),
			Reads{Labels: map[string]LabelRead{"zone": {}, "rack": {}}}},
		{"Gt, Lt and unknown operators read every value", pod(noRequests, requiredTerms(
			matching(requirement("gen", corev1.NodeSelectorOpGt, "3"), requirement("pool", corev1.NodeSelectorOpIn, "gpu")),
			matching(requirement("cores", corev1.NodeSelectorOpLt, "8"), requirement("pool", "Like", "g*")))),
			Reads{Labels: map[string]LabelRead{"gen": {ByValue: true}, "cores": {ByValue: true}, "pool": {Values: []string{"gpu"}, ByValue: true}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := NewTemplate(tc.pod).Reads()
			sortValues := cmpopts.SortSlices(func(a, b string) bool { return a < b })
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty(), sortValues); diff != "" {
				t.Errorf("Reads() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNodesAlikeInWhatIsReadFitAlike changes random nodes only where Reads says Check does
// not look, or to a value it reads like the old one, and expects the same verdict.
func TestNodesAlikeInWhatIsReadFitAlike(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 20))
	keys, values := []string{"pool", "zone", "gen"}, []string{"a", "b", "1", "7", ""}
	ops := []corev1.NodeSelectorOperator{
		corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists,
		corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt,
	}
	randomLabels := func() map[string]string {
		out := map[string]string{}
		for _, k := range append(keys, "other") {
			if r.IntN(3) > 0 {
				out[k] = values[r.IntN(len(values))]
			}
		}
		return out
	}
	for run := range 2000 {
		spec := pod(func(p *corev1.PodSpec) {
			switch r.IntN(3) {
			case 0:
				p.Containers[0].Resources.Requests = nil
			case 1:
				p.Containers[0].Resources.Requests = corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse([]string{"50m", "1", "4", "5"}[r.IntN(4)]),
					corev1.ResourceMemory: resource.MustParse([]string{"1Gi", "8Gi", "9Gi"}[r.IntN(3)]),
				}
			}
			if r.IntN(2) == 0 {
				p.NodeSelector = map[string]string{keys[r.IntN(len(keys))]: values[r.IntN(len(values))]}
			}
			var terms []corev1.NodeSelectorTerm
			for range r.IntN(3) {
				var term corev1.NodeSelectorTerm
				for range 1 + r.IntN(2) {
					var named []string
					for range r.IntN(3) {
						named = append(named, values[r.IntN(len(values))])
					}
					term.MatchExpressions = append(term.MatchExpressions, requirement(keys[r.IntN(len(keys))], ops[r.IntN(len(ops))], named...))
				}
				terms = append(terms, term)
			}
			if len(terms) > 0 {
				requiredTerms(terms...)(p)
			}
		})
		tmpl := NewTemplate(spec)
		reads := tmpl.Reads()
		a := node(fmt.Sprintf("n%d", r.IntN(3)), func(n *corev1.Node) { n.Labels = randomLabels() })
		b := a.DeepCopy()
		if !reads.Name {
			b.Name = "renamed"
		}
		// b holds each request as a does, in other quantities, and other resources.
		b.Status.Allocatable = corev1.ResourceList{"example.com/other": resource.MustParse(fmt.Sprint(r.IntN(3)))}
		for name, want := range reads.Requests {
			if have, ok := a.Status.Allocatable[name]; ok && have.Cmp(want) >= 0 {
				more := want.DeepCopy()
				more.Add(resource.MustParse(fmt.Sprint(r.IntN(2))))
				b.Status.Allocatable[name] = more
			} else if r.IntN(2) == 0 {
				b.Status.Allocatable[name] = resource.MustParse("100m")
			}
		}
		b.Labels = randomLabels()
		for k := range reads.Labels {
			delete(b.Labels, k)
			if v, ok := a.Labels[k]; ok {
				b.Labels[k] = alike(reads.Labels[k], v)
			}
		}
		if got, want := tmpl.Check(b), tmpl.Check(a); got != want {
			t.Fatalf("run %d: Check(%v) = %q, Check(%v) = %q, for a template reading %+v", run, b.Labels, got, a.Labels, want, reads)
		}
	}
}

// alike returns a value that read reads as it reads v: v itself, or another value that
// no requirement names when v is one of those.
func alike(read LabelRead, v string) string {
	if read.ByValue || slices.Contains(read.Values, v) {
		return v
	}
	return "unnamed-" + v
}
