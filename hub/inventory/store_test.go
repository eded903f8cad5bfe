package inventory

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func nodeInfo(name string, mutate ...func(*musterv1.NodeInfo)) musterv1.NodeInfo {
	n := musterv1.NodeInfo{
		Name:   name,
		Labels: map[string]string{"pool": "general"},
		Ready:  true,
		Allocatable: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("4"),
			corev1.ResourceMemory: resource.MustParse("16Gi"),
		},
	}
	for _, m := range mutate {
		m(&n)
	}
	return n
}

func slice(cluster, name string, nodes ...musterv1.NodeInfo) *musterv1.NodeSlice {
	return &musterv1.NodeSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: musterv1.MemberNamespace(cluster), Name: name},
		ClusterName: cluster,
		Nodes:       nodes,
	}
}

func names(nodes []*corev1.Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	return out
}

func TestReplaceSliceReplacesOnlyThatSlice(t *testing.T) {
	inv := New()
	must(t, inv.ReplaceSlice("c1", slice("c1", "s0", nodeInfo("a"), nodeInfo("b"))))
	must(t, inv.ReplaceSlice("c1", slice("c1", "s1", nodeInfo("c"))))
	must(t, inv.ReplaceSlice("c2", slice("c2", "s0", nodeInfo("a"))))

	must(t, inv.ReplaceSlice("c1", slice("c1", "s0", nodeInfo("b"), nodeInfo("d"))))
	if diff := cmp.Diff([]string{"b", "c", "d"}, names(inv.Nodes("c1"))); diff != "" {
		t.Errorf("c1 nodes after replacing s0 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a"}, names(inv.Nodes("c2"))); diff != "" {
		t.Errorf("c2 nodes must not change when c1's slice does (-want +got):\n%s", diff)
	}

	must(t, inv.DeleteSlice(musterv1.MemberNamespace("c1"), "s1"))
	if diff := cmp.Diff([]string{"b", "d"}, names(inv.Nodes("c1"))); diff != "" {
		t.Errorf("c1 nodes after deleting s1 (-want +got):\n%s", diff)
	}
}

// TestNodesTakeWhatTheirShapeCarries: a node that names a shape of its slice has that
// shape's labels, taints and allocatable resources as well as its own, for every query.
func TestNodesTakeWhatTheirShapeCarries(t *testing.T) {
	inv := New()
	s := slice("c1", "s0",
		musterv1.NodeInfo{Name: "a", Shape: ptr.To[int32](0), Labels: map[string]string{"host": "a"}, Ready: true},
		musterv1.NodeInfo{Name: "b", Shape: ptr.To[int32](1), Labels: map[string]string{"host": "b"}, Ready: true},
	)
	s.Shapes = []musterv1.NodeShape{
		{Labels: map[string]string{"pool": "general"}, Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}},
		{Labels: map[string]string{"pool": "gpu"}, Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")},
			Taints: []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}}},
	}
	must(t, inv.ReplaceSlice("c1", s))

	if diff := cmp.Diff([]string{"b"}, names(inv.NodesWithLabel("pool", "gpu"))); diff != "" {
		t.Errorf("nodes of the gpu pool (-want +got):\n%s", diff)
	}
	if got := inv.Capacity("c1")[corev1.ResourceCPU]; got.Cmp(resource.MustParse("12")) != 0 {
		t.Errorf("c1 CPU capacity = %s, want 12 (4 and 8 from the shapes)", got.String())
	}
	spec := &corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
	}}}}
	if diff := cmp.Diff([]string{"a"}, inv.EligibleNodes("c1", spec)); diff != "" {
		t.Errorf("nodes a pod without tolerations fits (-want +got):\n%s", diff)
	}
}

// TestANodeInTwoSlicesBelongsToTheLastLoaded: while an agent moves a node from one of
// its slices to the next (a node added before it shifts the rest), both may list it for
// a moment; the inventory holds it once, as the slice loaded last reports it, and a slice
// left with no node of its own is no longer held.
func TestANodeInTwoSlicesBelongsToTheLastLoaded(t *testing.T) {
	inv := New()
	eightCPUs := func(n *musterv1.NodeInfo) { n.Allocatable[corev1.ResourceCPU] = resource.MustParse("8") }
	step := func(what string, want []string, wantCPU string, wantSlices ...string) {
		t.Helper()
		if diff := cmp.Diff(want, names(inv.Nodes("c1")), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: nodes (-want +got):\n%s", what, diff)
		}
		if got := inv.Capacity("c1")[corev1.ResourceCPU]; got.Cmp(resource.MustParse(wantCPU)) != 0 {
			t.Errorf("%s: CPU capacity %s, want %s", what, got.String(), wantCPU)
		}
		if diff := cmp.Diff(wantSlices, inv.SliceKeys(), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: slices held (-want +got):\n%s", what, diff)
		}
	}
	ns := musterv1.MemberNamespace("c1")
	must(t, inv.ReplaceSlice("c1", slice("c1", "s0", nodeInfo("a"), nodeInfo("b"))))
	must(t, inv.ReplaceSlice("c1", slice("c1", "s1", nodeInfo("b", eightCPUs), nodeInfo("c"))))
	step("b in both slices", []string{"a", "b", "c"}, "16", ns+"/s0", ns+"/s1")
	must(t, inv.ReplaceSlice("c1", slice("c1", "s0", nodeInfo("a"))))
	step("b gone from s0", []string{"a", "b", "c"}, "16", ns+"/s0", ns+"/s1")
	must(t, inv.DeleteSlice(ns, "s1"))
	step("s1 deleted", []string{"a"}, "4", ns+"/s0")
	must(t, inv.ReplaceSlice("c1", slice("c1", "s2", nodeInfo("a", eightCPUs))))
	step("s0's only node taken by s2", []string{"a"}, "8", ns+"/s2")
	must(t, inv.DeleteSlice(ns, "s0"))
	step("s0, which owns nothing, deleted", []string{"a"}, "8", ns+"/s2")
	must(t, inv.DeleteSlice(ns, "s2"))
	step("s2 deleted", nil, "0")
}

// TestRepeatedNodeNameCountsOnce: the API server does not refuse a slice that names a
// node twice (its node list is atomic), so the inventory holds that node once, as the
// slice's last entry for it describes it: neither its capacity nor placement counts it
// twice.
func TestRepeatedNodeNameCountsOnce(t *testing.T) {
	inv := New()
	eightCPUs := func(n *musterv1.NodeInfo) { n.Allocatable[corev1.ResourceCPU] = resource.MustParse("8") }
	must(t, inv.ReplaceSlice("c1", slice("c1", "s0", nodeInfo("a"), nodeInfo("b"), nodeInfo("b", eightCPUs))))

	if diff := cmp.Diff([]string{"a", "b"}, names(inv.Nodes("c1"))); diff != "" {
		t.Errorf("c1 nodes (-want +got):\n%s", diff)
	}
	if got := inv.Capacity("c1")[corev1.ResourceCPU]; got.Cmp(resource.MustParse("12")) != 0 {
		t.Errorf("c1 CPU capacity = %s, want 12 (a's 4 and b's last 8)", got.String())
	}
	spec := &corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("6")},
	}}}}
	if diff := cmp.Diff([]string{"b"}, inv.EligibleNodes("c1", spec)); diff != "" {
		t.Errorf("nodes with 6 CPUs free (-want +got):\n%s", diff)
	}
}

func TestNodesWithLabel(t *testing.T) {
	inv := New()
	gpu := func(n *musterv1.NodeInfo) { n.Labels = map[string]string{"pool": "gpu"} }
	must(t, inv.ReplaceSlice("c1", slice("c1", "s0", nodeInfo("a", gpu), nodeInfo("b"))))
	must(t, inv.ReplaceSlice("c2", slice("c2", "s0", nodeInfo("c", gpu))))
	if diff := cmp.Diff([]string{"a", "c"}, names(inv.NodesWithLabel("pool", "gpu"))); diff != "" {
		t.Errorf("gpu nodes (-want +got):\n%s", diff)
	}
}

func TestEligibleNodesAndCapacity(t *testing.T) {
	inv := New()
	must(t, inv.ReplaceSlice("c1", slice("c1", "s0",
		nodeInfo("fits"),
		nodeInfo("cordoned", func(n *musterv1.NodeInfo) { n.Unschedulable = true }),
		nodeInfo("not-ready", func(n *musterv1.NodeInfo) { n.Ready = false }),
		nodeInfo("tainted", func(n *musterv1.NodeInfo) {
			n.Taints = []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}
		}),
		nodeInfo("small", func(n *musterv1.NodeInfo) { n.Allocatable[corev1.ResourceCPU] = resource.MustParse("500m") }),
	)))
	must(t, inv.ReplaceSlice("c2", slice("c2", "s0", nodeInfo("other"))))
	spec := &corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
	}}}}

	if diff := cmp.Diff([]string{"fits"}, inv.EligibleNodes("c1", spec)); diff != "" {
		t.Errorf("eligible nodes of c1 (-want +got):\n%s", diff)
	}
	want := map[string][]string{"c1": {"fits"}, "c2": {"other"}}
	if diff := cmp.Diff(want, inv.eligibleNames(spec, "")); diff != "" {
		t.Errorf("eligible nodes by cluster (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"c1": 1, "c2": 1}, inv.EligibleCountByCluster(spec)); diff != "" {
		t.Errorf("eligible node counts by cluster (-want +got):\n%s", diff)
	}
	// fits, tainted and small are ready and schedulable: 4 + 4 + 0.5 CPUs.
	capacity := inv.Capacity("c1")
	if got := capacity[corev1.ResourceCPU]; got.Cmp(resource.MustParse("8500m")) != 0 {
		t.Errorf("c1 CPU capacity = %s, want 8500m", got.String())
	}
	if got := capacity[corev1.ResourceMemory]; got.Cmp(resource.MustParse("48Gi")) != 0 {
		t.Errorf("c1 memory capacity = %s, want 48Gi", got.String())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// fleet200x500 builds the slices of 200 clusters with 500 nodes each, labelled as cloud
// nodes are: a unique hostname, a zone, a pool and a rack of ten nodes.
func fleet200x500() []*musterv1.NodeSlice {
	var slices []*musterv1.NodeSlice
	for c := range 200 {
		cluster := fmt.Sprintf("c%03d", c)
		nodes := make([]musterv1.NodeInfo, 500)
		for i := range nodes {
			name := fmt.Sprintf("%s-n%03d", cluster, i)
			nodes[i] = nodeInfo(name, func(n *musterv1.NodeInfo) {
				n.Labels = map[string]string{
					"kubernetes.io/hostname": name,
					"pool":                   []string{"general", "gpu", "spot"}[i%3],
					"zone":                   fmt.Sprintf("z%d", i%4),
					"rack":                   fmt.Sprintf("r%02d", i%50),
				}
				if i%10 == 0 {
					n.Taints = []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}
				}
			})
		}
		slices = append(slices, slice(cluster, cluster+"-0", nodes...))
	}
	return slices
}

// BenchmarkLoad100kNodes reports what the inventory keeps per node: the heap it holds after
// loading, with the NodeSlices it was loaded from dropped, divided by the nodes.
func BenchmarkLoad100kNodes(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		inv := New()
		for _, s := range fleet200x500() {
			if err := inv.ReplaceSlice(s.ClusterName, s); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		held := float64(after.HeapAlloc - before.HeapAlloc)
		b.ReportMetric(held/(1<<20), "heap-MiB")
		b.ReportMetric(held/100_000, "heap-B/node")
		runtime.KeepAlive(inv)
	}
}

func loaded100k(b *testing.B) *Inventory {
	inv := New()
	for _, s := range fleet200x500() {
		if err := inv.ReplaceSlice(s.ClusterName, s); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	return inv
}

// reportQueryTimes adds ms/query and, because wall time on a shared machine counts other
// processes' turns, the process's CPU time per query (GC included).
func reportQueryTimes(b *testing.B, query func()) {
	b.ReportAllocs()
	cpuBefore := cpuTime()
	for b.Loop() {
		query()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/query")
	b.ReportMetric(float64((cpuTime()-cpuBefore).Microseconds())/1000/float64(b.N), "cpu-ms/query")
}

func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		panic(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// A template most nodes match: a third of the fleet by pool, less the tainted tenth.
var manyMatch = &corev1.PodSpec{NodeSelector: map[string]string{"pool": "general"}, Containers: []corev1.Container{{Name: "c"}}}

// firstAsked returns, on each call, a template that decides as spec does but that the
// inventory was never asked: it tolerates a taint no node has, under a new key each time.
func firstAsked(spec *corev1.PodSpec) func() *corev1.PodSpec {
	n := 0
	return func() *corev1.PodSpec {
		n++
		s := spec.DeepCopy()
		s.Tolerations = append(s.Tolerations, corev1.Toleration{Key: fmt.Sprintf("never-%d", n), Operator: corev1.TolerationOpExists})
		return s
	}
}

func wantNodes(b *testing.B, got map[string][]string, perCluster int) {
	if len(got) != 200 || len(got["c000"]) != perCluster {
		b.Fatalf("eligible clusters = %d, nodes of c000 = %d, want 200 and %d", len(got), len(got["c000"]), perCluster)
	}
}

// BenchmarkEligibleNodesOver100kNodes asks the same template again, as the hub's
// controllers do on every reconcile over an unchanged fleet.
func BenchmarkEligibleNodesOver100kNodes(b *testing.B) {
	inv := loaded100k(b)
	reportQueryTimes(b, func() { wantNodes(b, inv.eligibleNames(manyMatch, ""), 150) })
}

// BenchmarkEligibleNodesColdOver100kNodes asks a template for the first time: every
// candidate the label index names is checked.
func BenchmarkEligibleNodesColdOver100kNodes(b *testing.B) {
	inv := loaded100k(b)
	next := firstAsked(manyMatch)
	reportQueryTimes(b, func() { wantNodes(b, inv.eligibleNames(next(), ""), 150) })
}

// BenchmarkEligibleCountColdOver100kNodes is the question the hub's controllers ask, how
// many, for a template asked for the first time.
func BenchmarkEligibleCountColdOver100kNodes(b *testing.B) {
	inv := loaded100k(b)
	next := firstAsked(manyMatch)
	reportQueryTimes(b, func() {
		if got := inv.EligibleCountByCluster(next()); len(got) != 200 || got["c000"] != 150 {
			b.Fatalf("eligible clusters = %d, nodes of c000 = %d, want 200 and 150", len(got), got["c000"])
		}
	})
}

// BenchmarkEligibleNodesSelectiveColdOver100kNodes asks, for the first time, for one rack's
// nodes in two zones outside the general pool: 7 of each cluster's 500.
func BenchmarkEligibleNodesSelectiveColdOver100kNodes(b *testing.B) {
	inv := loaded100k(b)
	next := firstAsked(podSpec(selector("rack", "r07"), required(term(
		expr("zone", corev1.NodeSelectorOpIn, "z1", "z3"), expr("pool", corev1.NodeSelectorOpNotIn, "general")))))
	reportQueryTimes(b, func() { wantNodes(b, inv.eligibleNames(next(), ""), 7) })
}

// BenchmarkEligibleNodesColdRequestsOver100kNodes asks, for the first time, a template
// with a CPU request of a fleet whose nodes each report their own allocatable memory, as
// kubelets do: no two nodes share an allocatable list.
func BenchmarkEligibleNodesColdRequestsOver100kNodes(b *testing.B) {
	inv := New()
	for _, s := range fleet200x500() {
		for i := range s.Nodes {
			s.Nodes[i].Allocatable[corev1.ResourceMemory] = resource.MustParse(fmt.Sprintf("%dKi", 16_000_000+i))
		}
		if err := inv.ReplaceSlice(s.ClusterName, s); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	spec := manyMatch.DeepCopy()
	spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	next := firstAsked(spec)
	reportQueryTimes(b, func() { wantNodes(b, inv.eligibleNames(next(), ""), 150) })
}
