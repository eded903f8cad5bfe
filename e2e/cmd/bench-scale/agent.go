package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/nodeshape"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/benchstat"
	"github.com/musterhq/muster/e2e/fleetsim"
	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/e2e/framework/local"
)

// agentChurnLabel is the node label the agent scenario changes on 1 % of the member's
// nodes each minute.
const agentChurnLabel = "bench.muster.dev/revision"

// agent: one real member with -agent-nodes kwok nodes joins the hub with a real agent.
// How long until the hub holds every node; the agent's memory, before and once its Job
// controller has created the -agent-pods pods of one placed job; then, for -agent-rounds
// minutes, 1 % of the nodes (spread over every slice) are relabelled at the start of each
// minute: how many NodeSlice writes reach the hub per minute, and how long from a label
// change until the hub's NodeSlice holds it.
func (b *bench) agent(ctx context.Context) error {
	// The simulated members' churn saturates the hub's API server on these two cores; the
	// agent is measured against a hub that is only kept alive by their renewals.
	if b.stopChurn != nil {
		b.stopChurn()
	}
	// What the scenarios before it leave behind (thousands of Works deleted, a thousand
	// agents restarted) can keep the hub's API server from answering for minutes; the
	// member joins once it answers again, and the line says how long that took.
	answering, err := waitFor(ctx, time.Now(), b.o.timeout, "the hub's API server to answer within a second", func() bool {
		quick, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		var list musterv1.MemberClusterList
		return b.hub.Client.List(quick, &list, client.Limit(1)) == nil
	})
	if err != nil {
		return err
	}
	n := b.o.agentNodes
	member, err := b.up.AddMember(ctx, 0)
	if err != nil {
		return err
	}
	nodes := make([]*corev1.Node, n)
	for i := range nodes {
		nodes[i] = local.NewNode(fmt.Sprintf("%s-n%05d", member.Name, i))
		nodes[i].Labels[agentChurnLabel] = "0"
	}
	start := time.Now()
	if err := forEachLimit(ctx, nodes, 16, func(ctx context.Context, node *corev1.Node) error {
		return local.CreateNodes(ctx, member.Clientset, node)
	}); err != nil {
		return err
	}
	if err := framework.WaitForClusterReady(ctx, member, n, b.o.timeout); err != nil {
		return err
	}
	ready := time.Since(start)
	start = time.Now()
	if err := b.muster.JoinAndAccept(ctx, []*framework.Cluster{member}); err != nil {
		return err
	}
	ns := musterv1.MemberNamespace(member.Name)
	reported, err := waitFor(ctx, start, b.o.timeout, fmt.Sprintf("the hub to hold %d nodes of %s", n, member.Name), func() bool {
		var list musterv1.NodeSliceList
		if err := b.hub.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false
		}
		total := 0
		for _, s := range list.Items {
			total += len(s.Nodes)
		}
		return total == n
	})
	if err != nil {
		return err
	}
	agentProc := b.muster.Agents[member.Name]
	settled, _ := agentProc.RSS()
	defer b.deletePods(ctx)
	podsCreated, err := b.runPods(ctx, member)
	if err != nil {
		return err
	}
	withPods, _ := agentProc.RSS()

	writes, latencies, err := b.churnMember(ctx, member, nodes, ns)
	if err != nil {
		return err
	}
	peak, _ := agentProc.RSS()
	running, err := runningPods(ctx, member)
	if err != nil {
		return err
	}
	slices.Sort(latencies)
	fmt.Printf("scale agent hub-answering-after=%s nodes=%d nodes-ready=%s joined-and-reported=%s agent-rss=%dMiB pods=%d pods-created=%s agent-rss-with-pods=%dMiB agent-rss-after-churn=%dMiB pods-running-after-churn=%d churn=1%%/min rounds=%d slice-writes-per-minute=%s slices=%d label-to-hub-p50=%s label-to-hub-max=%s\n",
		round(answering), n, round(ready), round(reported), settled>>20, b.o.agentPods, round(podsCreated), withPods>>20, peak>>20, running, b.o.agentRounds, perMinute(writes), (n+musterv1.MaxNodesPerSlice-1)/musterv1.MaxNodesPerSlice,
		benchstat.Percentile(latencies, 50).Round(time.Millisecond), benchstat.Percentile(latencies, 100).Round(time.Millisecond))
	return nil
}

// churnMember relabels 1 % of nodes, spread over every slice, at the start of each of
// -agent-rounds minutes, and returns the NodeSlice writes the hub saw in each minute and,
// for every relabelled node, how long until the hub's slice held its new label.
func (b *bench) churnMember(ctx context.Context, member *framework.Cluster, nodes []*corev1.Node, ns string) ([]int, []time.Duration, error) {
	watcher, err := client.NewWithWatch(b.hub.Config, client.Options{Scheme: b.hub.Client.Scheme()})
	if err != nil {
		return nil, nil, err
	}
	w, err := watcher.Watch(ctx, &musterv1.NodeSliceList{}, client.InNamespace(ns))
	if err != nil {
		return nil, nil, err
	}
	defer w.Stop()
	var mu sync.Mutex
	writes := make([]int, b.o.agentRounds)
	changedAt := map[string]time.Time{} // node name → when its label was set to the round
	want := map[string]string{}
	var latencies []time.Duration
	current := 0 // the minute of churn under way, from 1
	go func() {
		for ev := range w.ResultChan() {
			slice, ok := ev.Object.(*musterv1.NodeSlice)
			if !ok || ev.Type != watch.Modified {
				continue
			}
			seen := time.Now()
			mu.Lock()
			if current > 0 {
				writes[current-1]++
			}
			for i := range slice.Nodes {
				node := nodeshape.Resolve(&slice.Nodes[i], slice.Shapes)
				if at, pending := changedAt[node.Name]; pending && node.Labels[agentChurnLabel] == want[node.Name] {
					latencies = append(latencies, seen.Sub(at))
					delete(changedAt, node.Name)
				}
			}
			mu.Unlock()
		}
	}()
	const step = 100 // one node in a hundred, spread over every slice
	for r := 1; r <= b.o.agentRounds; r++ {
		mu.Lock()
		current = r
		mu.Unlock()
		minute := time.Now()
		value := strconv.Itoa(r)
		var picked []*corev1.Node
		for i := (r - 1) % step; i < len(nodes); i += step {
			picked = append(picked, nodes[i])
		}
		if err := forEachLimit(ctx, picked, 16, func(ctx context.Context, node *corev1.Node) error {
			patch := []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, agentChurnLabel, value))
			at := time.Now()
			mu.Lock()
			changedAt[node.Name], want[node.Name] = at, value
			mu.Unlock()
			_, err := member.Clientset.CoreV1().Nodes().Patch(ctx, node.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
			return err
		}); err != nil {
			return nil, nil, err
		}
		if err := pause(ctx, time.Until(minute.Add(time.Minute))); err != nil {
			return nil, nil, err
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(changedAt) > 0 {
		return nil, nil, fmt.Errorf("%d relabelled nodes never reached the hub's NodeSlices within a minute", len(changedAt))
	}
	return slices.Clone(writes), slices.Clone(latencies), nil
}

// perMinute prints each minute's count, as "12,10".
func perMinute(counts []int) string {
	out := make([]string, len(counts))
	for i, c := range counts {
		out[i] = strconv.Itoa(c)
	}
	return strings.Join(out, ",")
}

// runPods places one FleetJob of -agent-pods pods, all at once and never finishing, on the
// real member, and returns how long until its agent's Job controller had created them
// all (its Job's status counts them): the pods the agent's own cache holds while its
// nodes churn. The member's scheduler and kwok run them meanwhile.
func (b *bench) runPods(ctx context.Context, member *framework.Cluster) (time.Duration, error) {
	if b.o.agentPods == 0 {
		return 0, nil
	}
	n := int32(b.o.agentPods)
	fj := fleetsim.DividedJob(metav1.NamespaceDefault, agentPodsJob, 1)
	fj.Spec.Placement = musterv1.FleetJobPlacement{Mode: musterv1.PlacementSingle}
	fj.Spec.Placement.ClusterNames = []string{member.Name}
	fj.Spec.Template.Spec.Completions, fj.Spec.Template.Spec.Parallelism = ptr.To(n), ptr.To(n)
	fj.Spec.Template.Spec.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
	// The local fleet's kwok stages finish a Job's pod a second after it runs unless it
	// asks for an outcome after a delay (e2e/framework/local/stages.yaml): these run on
	// past the scenario, which deletes them.
	pod := &fj.Spec.Template.Spec.Template
	pod.Labels = map[string]string{"e2e.muster.dev/outcome": "Succeeded"}
	pod.Annotations = map[string]string{"e2e.muster.dev/delay": "24h"}
	start := time.Now()
	if err := b.hub.Client.Create(ctx, fj); err != nil {
		return 0, err
	}
	// The pods run on past the wait, failed or not, until deletePods ends them.
	// The member's Job status is the agent's own count, one small read a poll; listing
	// 10,000 pods ten times a second would compete with the agent creating them.
	return waitFor(ctx, start, b.o.timeout, fmt.Sprintf("%d pods on %s", n, member.Name), func() bool {
		var jobs batchv1.JobList
		if err := member.Client.List(ctx, &jobs, client.InNamespace(metav1.NamespaceDefault)); err != nil || len(jobs.Items) != 1 {
			return false
		}
		st := jobs.Items[0].Status
		return st.Active+st.Succeeded+st.Failed >= n
	})
}

// runningPods counts the Running pods in the member's default namespace, a page at a
// time.
func runningPods(ctx context.Context, member *framework.Cluster) (int, error) {
	running, next := 0, ""
	for {
		var page corev1.PodList
		if err := member.Client.List(ctx, &page, client.InNamespace(metav1.NamespaceDefault), client.Limit(5000), client.Continue(next)); err != nil {
			return 0, err
		}
		for _, p := range page.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		if next = page.Continue; next == "" {
			return running, nil
		}
	}
}

// deletePods deletes the agent scenario's job, without waiting: the scenario is over.
func (b *bench) deletePods(ctx context.Context) {
	fj := &musterv1.FleetJob{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: agentPodsJob}}
	_ = b.hub.Client.Delete(context.WithoutCancel(ctx), fj, client.PropagationPolicy(metav1.DeletePropagationBackground))
}

// agentPodsJob names the FleetJob of the agent scenario's pods.
const agentPodsJob = "scale-agent-pods"
