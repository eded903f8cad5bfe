package inventory

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/placement/nodefit"
)

// scanEligible is the answer without the index: every node of the nodes table checked.
func scanEligible(inv *Inventory, spec *corev1.PodSpec) map[string][]string {
	tmpl := nodefit.NewTemplate(spec)
	out := map[string][]string{}
	it, err := inv.db.Txn(false).Get(nodesTable, byID)
	if err != nil {
		panic(err)
	}
	for obj := it.Next(); obj != nil; obj = it.Next() {
		row := obj.(*node)
		if tmpl.Check(row.Node) == nodefit.Fits {
			out[row.Cluster] = append(out[row.Cluster], row.Node.Name)
		}
	}
	for _, names := range out {
		slices.Sort(names)
	}
	return out
}

// expectSameAsScan fails unless every query answers what the plain scan does.
func expectSameAsScan(t *testing.T, inv *Inventory, spec *corev1.PodSpec) {
	t.Helper()
	want := scanEligible(inv, spec)
	if diff := cmp.Diff(want, inv.eligibleNames(spec, ""), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("eligibleNames differs from the scan (-scan +indexed):\n%s", diff)
	}
	counts := map[string]int{}
	for c, names := range want {
		counts[c] = len(names)
	}
	if diff := cmp.Diff(counts, inv.EligibleCountByCluster(spec), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("EligibleCountByCluster differs from the scan (-scan +indexed):\n%s", diff)
	}
	for _, c := range []string{"c0", "c1", "c2"} {
		if diff := cmp.Diff(want[c], inv.EligibleNodes(c, spec), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("EligibleNodes(%s) differs from the scan (-scan +indexed):\n%s", c, diff)
		}
	}
}

func labelled(labels map[string]string) func(*musterv1.NodeInfo) {
	return func(n *musterv1.NodeInfo) { n.Labels = labels }
}

func required(terms ...corev1.NodeSelectorTerm) func(*corev1.PodSpec) {
	return func(p *corev1.PodSpec) {
		p.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
		}}
	}
}

func term(exprs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchExpressions: exprs}
}

func expr(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func podSpec(mutate ...func(*corev1.PodSpec)) *corev1.PodSpec {
	p := &corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func selector(pairs ...string) func(*corev1.PodSpec) {
	return func(p *corev1.PodSpec) {
		p.NodeSelector = map[string]string{}
		for i := 0; i < len(pairs); i += 2 {
			p.NodeSelector[pairs[i]] = pairs[i+1]
		}
	}
}

func TestEligibleNodesIndexedAnswersAsTheScan(t *testing.T) {
	inv := New()
	must(t, inv.ReplaceSlice("c0", slice("c0", "s0",
		nodeInfo("a", labelled(map[string]string{"pool": "gpu", "zone": "z1", "gen": "3"})),
		nodeInfo("b", labelled(map[string]string{"pool": "gpu", "zone": "z2", "gen": "5"})),
		nodeInfo("c", labelled(map[string]string{"pool": "general", "zone": "z1"})),
		nodeInfo("d", labelled(map[string]string{"pool": ""})),
		nodeInfo("e", labelled(map[string]string{"pool": "gpu", "zone": "z1"}), func(n *musterv1.NodeInfo) {
			n.Taints = []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}
		}),
		nodeInfo("f", labelled(nil)),
	)))
	must(t, inv.ReplaceSlice("c0", slice("c0", "s1",
		nodeInfo("g", labelled(map[string]string{"pool": "gpu", "zone": "z3"}), func(n *musterv1.NodeInfo) { n.Ready = false }),
		nodeInfo("h", labelled(map[string]string{"pool": "spot", "zone": "z2"}), func(n *musterv1.NodeInfo) { n.Unschedulable = true }),
	)))
	must(t, inv.ReplaceSlice("c1", slice("c1", "s0",
		nodeInfo("a", labelled(map[string]string{"pool": "gpu", "zone": "z2", "gen": "4"})),
		nodeInfo("i", labelled(map[string]string{"pool": "spot"}), func(n *musterv1.NodeInfo) {
			n.Allocatable[corev1.ResourceCPU] = resource.MustParse("500m")
		}),
	)))
	gt := func(v string) corev1.NodeSelectorRequirement { return expr("gen", corev1.NodeSelectorOpGt, v) }
	cases := map[string]*corev1.PodSpec{
		"no selector":                        podSpec(),
		"one pair":                           podSpec(selector("pool", "gpu")),
		"two pairs":                          podSpec(selector("pool", "gpu", "zone", "z1")),
		"an empty value":                     podSpec(selector("pool", "")),
		"a pair no node has":                 podSpec(selector("pool", "arm")),
		"a key no node has":                  podSpec(selector("rack", "r1")),
		"the empty key":                      podSpec(selector("", "gpu")),
		"In":                                 podSpec(required(term(expr("pool", corev1.NodeSelectorOpIn, "gpu", "spot")))),
		"In with one value twice":            podSpec(required(term(expr("pool", corev1.NodeSelectorOpIn, "gpu", "gpu")))),
		"In without values":                  podSpec(required(term(expr("pool", corev1.NodeSelectorOpIn)))),
		"Exists":                             podSpec(required(term(expr("zone", corev1.NodeSelectorOpExists)))),
		"Exists with values (invalid)":       podSpec(required(term(expr("zone", corev1.NodeSelectorOpExists, "z1")))),
		"NotIn alone scans":                  podSpec(required(term(expr("pool", corev1.NodeSelectorOpNotIn, "gpu")))),
		"DoesNotExist alone scans":           podSpec(required(term(expr("zone", corev1.NodeSelectorOpDoesNotExist)))),
		"Gt after In":                        podSpec(required(term(expr("pool", corev1.NodeSelectorOpIn, "gpu"), gt("3")))),
		"Lt alone":                           podSpec(required(term(expr("gen", corev1.NodeSelectorOpLt, "5")))),
		"NotIn after Exists":                 podSpec(required(term(expr("zone", corev1.NodeSelectorOpExists), expr("pool", corev1.NodeSelectorOpNotIn, "gpu")))),
		"two terms overlapping":              podSpec(required(term(expr("pool", corev1.NodeSelectorOpIn, "gpu")), term(expr("zone", corev1.NodeSelectorOpIn, "z1")))),
		"a term the index cannot serve":      podSpec(required(term(expr("pool", corev1.NodeSelectorOpIn, "gpu")), term(expr("zone", corev1.NodeSelectorOpDoesNotExist)))),
		"an empty term":                      podSpec(required(term(expr("pool", corev1.NodeSelectorOpIn, "spot")), term())),
		"no terms":                           podSpec(required()),
		"selector and affinity":              podSpec(selector("zone", "z2"), required(term(expr("pool", corev1.NodeSelectorOpIn, "gpu", "spot")))),
		"selector and a term without lookup": podSpec(selector("pool", "gpu"), required(term(gt("3")))),
		"matchFields": podSpec(required(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}},
		}})),
		"matchFields and In": podSpec(required(corev1.NodeSelectorTerm{
			MatchExpressions: []corev1.NodeSelectorRequirement{expr("pool", corev1.NodeSelectorOpIn, "gpu")},
			MatchFields:      []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"b"}}},
		})),
		"an invalid key":       podSpec(required(term(expr("not a key!", corev1.NodeSelectorOpIn, "x")))),
		"nodeName":             podSpec(selector("pool", "gpu"), func(p *corev1.PodSpec) { p.NodeName = "a" }),
		"tolerating the taint": podSpec(selector("pool", "gpu"), func(p *corev1.PodSpec) { p.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}} }),
		"requests": podSpec(selector("pool", "spot"), func(p *corev1.PodSpec) {
			p.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		}),
	}
	for name, spec := range cases {
		t.Run(name, func(t *testing.T) { expectSameAsScan(t, inv, spec) })
	}
}

func TestEligibleNodesFollowSliceChanges(t *testing.T) {
	inv := New()
	gpu := labelled(map[string]string{"pool": "gpu"})
	spec := podSpec(selector("pool", "gpu"))
	must(t, inv.ReplaceSlice("c0", slice("c0", "s0", nodeInfo("a", gpu), nodeInfo("b", gpu))))
	// s1 reports b too: the node moves to the slice loaded last, as the nodes table has it.
	must(t, inv.ReplaceSlice("c0", slice("c0", "s1", nodeInfo("b"), nodeInfo("c", gpu))))
	if diff := cmp.Diff(map[string][]string{"c0": {"a", "c"}}, inv.eligibleNames(spec, "")); diff != "" {
		t.Errorf("after s1 took b (-want +got):\n%s", diff)
	}
	expectSameAsScan(t, inv, spec)
	// A slice reporting a name twice keeps the last.
	must(t, inv.ReplaceSlice("c0", slice("c0", "s0", nodeInfo("a", gpu), nodeInfo("a"))))
	expectSameAsScan(t, inv, spec)
	must(t, inv.DeleteSlice(musterv1.MemberNamespace("c0"), "s1"))
	must(t, inv.DeleteSlice(musterv1.MemberNamespace("c0"), "s0"))
	if got := inv.eligibleNames(podSpec(), ""); len(got) != 0 {
		t.Errorf("eligible nodes after deleting every slice = %v, want none", got)
	}
}

// FuzzEligibleNodesAnswerAsTheScan loads a random fleet from a seed, replacing and
// deleting slices, and after each change asks templates from a small pool, so that some
// are answered from remembered verdicts: every answer must be the scan's.
func FuzzEligibleNodesAnswerAsTheScan(f *testing.F) {
	for seed := range uint64(40) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		r := rand.New(rand.NewPCG(seed, 20))
		specs := make([]*corev1.PodSpec, 4)
		for i := range specs {
			specs[i] = randomSpec(r)
		}
		inv := New()
		for range 6 {
			randomChange(t, r, inv)
			for range 2 {
				expectSameAsScan(t, inv, pick(r, specs))
			}
		}
	})
}

func randomChange(t *testing.T, r *rand.Rand, inv *Inventory) {
	cluster := fmt.Sprintf("c%d", r.IntN(3))
	name := fmt.Sprintf("s%d", r.IntN(3))
	if r.IntN(5) == 0 {
		must(t, inv.DeleteSlice(musterv1.MemberNamespace(cluster), name))
		return
	}
	nodes := make([]musterv1.NodeInfo, r.IntN(32))
	for i := range nodes {
		nodes[i] = randomNode(r)
	}
	must(t, inv.ReplaceSlice(cluster, slice(cluster, name, nodes...)))
}

// TestQueriesDuringReplacesSeeWholeSlices runs queries beside slice replacements (run it
// with -race): each answer holds a slice's nodes all before or all after a replacement.
func TestQueriesDuringReplacesSeeWholeSlices(t *testing.T) {
	inv := New()
	gpu := labelled(map[string]string{"pool": "gpu"})
	version := func(v int) *musterv1.NodeSlice {
		return slice("c0", "s0", nodeInfo(fmt.Sprintf("v%d-a", v), gpu), nodeInfo(fmt.Sprintf("v%d-b", v), gpu))
	}
	must(t, inv.ReplaceSlice("c0", version(0)))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for v := 1; v <= 200; v++ {
			if err := inv.ReplaceSlice("c0", version(v)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	spec := podSpec(selector("pool", "gpu"))
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		names := inv.EligibleNodes("c0", spec)
		if len(names) != 2 || names[0][:len(names[0])-1] != names[1][:len(names[1])-1] {
			t.Fatalf("eligible nodes = %v, want both nodes of one version", names)
		}
	}
}

func TestVerdictsAreBounded(t *testing.T) {
	var v verdicts
	for i := range maxVerdictsPerSlice * 3 {
		v.put([32]byte{byte(i)}, bitmap{uint64(i)})
		if len(v.fits) > maxVerdictsPerSlice {
			t.Fatalf("%d verdicts held, want at most %d", len(v.fits), maxVerdictsPerSlice)
		}
		if got, ok := v.get([32]byte{byte(i)}); !ok || got[0] != uint64(i) {
			t.Fatalf("the verdict just put is %v, %v", got, ok)
		}
	}
}

var (
	labelKeys   = []string{"pool", "zone", "gen", "arch"}
	labelValues = []string{"", "a", "b", "c", "1", "3", "10"}
)

func pick[T any](r *rand.Rand, from []T) T { return from[r.IntN(len(from))] }

// randomNode returns one of 30 names with random labels (and a host label naming it on
// some), state, taints and allocatable in several forms.
func randomNode(r *rand.Rand) musterv1.NodeInfo {
	name := fmt.Sprintf("n%d", r.IntN(30))
	return nodeInfo(name, func(n *musterv1.NodeInfo) {
		n.Labels = map[string]string{}
		for _, k := range labelKeys {
			if r.IntN(3) > 0 {
				n.Labels[k] = pick(r, labelValues)
			}
		}
		if r.IntN(2) == 0 {
			n.Labels["host"] = name
		}
		n.Ready = r.IntN(8) > 0
		n.Unschedulable = r.IntN(8) == 0
		for range r.IntN(3) {
			n.Taints = append(n.Taints, corev1.Taint{Key: pick(r, labelKeys), Value: pick(r, []string{"", "x"}), Effect: pick(r, []corev1.TaintEffect{
				corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute, corev1.TaintEffectPreferNoSchedule,
			})})
		}
		n.Allocatable[corev1.ResourceCPU] = resource.MustParse(pick(r, []string{"1", "2", "2000m", "4"}))
		if r.IntN(4) == 0 {
			delete(n.Allocatable, corev1.ResourceMemory)
		}
	})
}

func randomSpec(r *rand.Rand) *corev1.PodSpec {
	spec := podSpec()
	if r.IntN(2) == 0 {
		spec.NodeSelector = map[string]string{}
		for range r.IntN(3) {
			spec.NodeSelector[pick(r, labelKeys)] = pick(r, labelValues)
		}
	}
	if r.IntN(3) > 0 {
		terms := make([]corev1.NodeSelectorTerm, r.IntN(4))
		for i := range terms {
			for range r.IntN(4) {
				terms[i].MatchExpressions = append(terms[i].MatchExpressions, randomExpression(r))
			}
			if r.IntN(10) == 0 {
				terms[i].MatchFields = []corev1.NodeSelectorRequirement{
					{Key: "metadata.name", Operator: pick(r, []corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn}), Values: []string{fmt.Sprintf("n%d", r.IntN(30))}},
				}
			}
		}
		required(terms...)(spec)
	}
	if r.IntN(4) == 0 {
		spec.Tolerations = []corev1.Toleration{{Key: pick(r, labelKeys), Operator: corev1.TolerationOpExists}}
	}
	if r.IntN(4) == 0 {
		spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Key: pick(r, labelKeys), Operator: corev1.TolerationOpEqual, Value: "x"})
	}
	if r.IntN(4) == 0 {
		spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(pick(r, []string{"1", "2", "3"}))}
	}
	if r.IntN(10) == 0 {
		spec.NodeName = fmt.Sprintf("n%d", r.IntN(30))
	}
	return spec
}

func randomExpression(r *rand.Rand) corev1.NodeSelectorRequirement {
	op := pick(r, []corev1.NodeSelectorOperator{
		corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists,
		corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt,
	})
	key, value := pick(r, labelKeys), func() string { return pick(r, labelValues) }
	if r.IntN(5) == 0 {
		// The host label has a value per node: most values are ones no requirement names.
		key, value = "host", func() string { return fmt.Sprintf("n%d", r.IntN(30)) }
	}
	var values []string
	for range r.IntN(3) {
		values = append(values, value())
	}
	return expr(key, op, values...)
}
