package broadcastjob_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/musterhq/muster/agent/broadcastjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/envtest"
)

var (
	env   *envtest.Environment
	clock = clocktesting.NewFakeClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
)

// TestMain runs the BroadcastJob controller, on a clock the tests move, against a real
// API server; its manager engages a hub as the agent's does. There is no scheduler or
// kubelet: tests play them by setting pod phases.
func TestMain(m *testing.M) {
	os.Exit(envtest.MainMulticluster(m, &env, func(mgr mcmanager.Manager) error {
		r := &broadcastjob.Reconciler{Manager: mgr, Clock: clock, Workers: 2, RoundDone: func(j *musterv1.BroadcastJob) { seen.Done(j) }}
		return r.SetupWithManager(mgr)
	}))
}

// fixture is one test's namespace and node pool. Nodes are cluster-wide, so each test's
// nodes carry a pool label its jobs select.
type fixture struct {
	t    *testing.T
	ns   string
	pool string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ns := env.Namespace(t)
	return &fixture{t: t, ns: ns, pool: ns}
}

// node adds a Ready node of the fixture's pool with 4 CPUs.
func (f *fixture) node(name string, mutate ...func(*corev1.Node)) *corev1.Node {
	f.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: f.pool + "-" + name, Labels: map[string]string{"pool": f.pool}}}
	for _, m := range mutate {
		m(n)
	}
	status := n.Status
	if err := env.Client.Create(f.t.Context(), n); err != nil {
		f.t.Fatal(err)
	}
	n.Status = status
	n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue})
	if n.Status.Allocatable == nil {
		n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
	}
	if err := env.Client.Status().Update(f.t.Context(), n); err != nil {
		f.t.Fatal(err)
	}
	// The API server taints new nodes not-ready; node lifecycle, absent here, would lift it.
	n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeNotReady })
	if err := env.Client.Update(f.t.Context(), n); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = env.Client.Delete(context.Background(), n) })
	return n
}

// job creates a BroadcastJob selecting the fixture's pool.
func (f *fixture) job(mutate ...func(*musterv1.BroadcastJob)) *musterv1.BroadcastJob {
	f.t.Helper()
	j := &musterv1.BroadcastJob{
		ObjectMeta: metav1.ObjectMeta{Name: "bcj", Namespace: f.ns},
		Spec: musterv1.BroadcastJobSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "probe"}},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				NodeSelector:  map[string]string{"pool": f.pool},
				Containers: []corev1.Container{{Name: "probe", Image: "busybox", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
				}}},
			},
		}},
	}
	for _, m := range mutate {
		m(j)
	}
	if err := env.Client.Create(f.t.Context(), j); err != nil {
		f.t.Fatal(err)
	}
	return j
}

func (f *fixture) get(j *musterv1.BroadcastJob) *musterv1.BroadcastJob {
	f.t.Helper()
	out := &musterv1.BroadcastJob{}
	if err := env.Client.Get(f.t.Context(), client.ObjectKeyFromObject(j), out); err != nil {
		f.t.Fatal(err)
	}
	return out
}

// pods lists the job's pods by node.
func (f *fixture) pods() map[string]*corev1.Pod {
	f.t.Helper()
	var list corev1.PodList
	if err := env.Client.List(f.t.Context(), &list, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	out := map[string]*corev1.Pod{}
	for i := range list.Items {
		p := &list.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		out[strings.TrimPrefix(broadcastjob.PodNode(p), f.pool+"-")] = p
	}
	return out
}

// finish plays the kubelet: the pod on node ends in phase.
func (f *fixture) finish(node string, phase corev1.PodPhase) {
	f.t.Helper()
	pod := f.pods()[node]
	if pod == nil {
		f.t.Fatalf("no pod on node %s", node)
	}
	pod.Status.Phase = phase
	if err := env.Client.Status().Update(f.t.Context(), pod); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) eventually(what string, cond func() (bool, string)) {
	f.t.Helper()
	envtest.Eventually(f.t, what, cond)
}

// waitForPods waits until exactly nodes have pods.
func (f *fixture) waitForPods(nodes ...string) {
	f.t.Helper()
	f.eventually(fmt.Sprintf("pods on %v", nodes), func() (bool, string) {
		pods := f.pods()
		if len(pods) != len(nodes) {
			return false, fmt.Sprintf("%d pods: %v", len(pods), keys(pods))
		}
		for _, n := range nodes {
			if pods[n] == nil {
				return false, fmt.Sprintf("no pod on %s: %v", n, keys(pods))
			}
		}
		return true, ""
	})
}

// waitForStatus waits until the job's phase and counts are as given.
func (f *fixture) waitForStatus(j *musterv1.BroadcastJob, phase musterv1.BroadcastJobPhase, counts musterv1.BroadcastCounts) *musterv1.BroadcastJob {
	f.t.Helper()
	var got *musterv1.BroadcastJob
	f.eventually(fmt.Sprintf("phase %s with %+v", phase, counts), func() (bool, string) {
		got = f.get(j)
		return got.Status.Phase == phase && got.Status.BroadcastCounts == counts,
			fmt.Sprintf("phase %s counts %+v conditions %+v", got.Status.Phase, got.Status.BroadcastCounts, got.Status.Conditions)
	})
	return got
}

// touch changes a label so the controller looks at the job again after the clock moved.
func (f *fixture) touch(j *musterv1.BroadcastJob) {
	f.t.Helper()
	cur := f.get(j)
	patch := client.MergeFrom(cur.DeepCopy())
	if cur.Labels == nil {
		cur.Labels = map[string]string{}
	}
	cur.Labels["touched"] = fmt.Sprint(time.Now().UnixNano())
	if err := env.Client.Patch(f.t.Context(), cur, patch); err != nil {
		f.t.Fatal(err)
	}
}

func keys(m map[string]*corev1.Pod) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// setPaused sets spec.paused with a patch, which does not conflict with the controller's
// status writes.
func (f *fixture) setPaused(j *musterv1.BroadcastJob, paused bool) {
	f.t.Helper()
	cur := f.get(j)
	patch := client.MergeFrom(cur.DeepCopy())
	cur.Spec.Paused = paused
	if err := env.Client.Patch(f.t.Context(), cur, patch); err != nil {
		f.t.Fatal(err)
	}
}

// seen records the rounds of the controller: the newest version of each job a round
// read and finished with.
var seen = &envtest.Rounds{}

// observed makes the controller look at the job again and waits until one of its rounds
// that read the job as it is now (or later) is over: anything the changes made so far
// would cause, that round has done.
func (f *fixture) observed(j *musterv1.BroadcastJob) {
	f.t.Helper()
	f.touch(j)
	seen.WaitPast(f.t, f.get(j))
}
