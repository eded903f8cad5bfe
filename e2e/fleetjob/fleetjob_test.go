//go:build e2e

package fleetjob

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

const ns = "default"

func newFleetJob(name string, mode musterv1.PlacementMode, parallelism, completions int32, mutate ...func(*musterv1.FleetJob)) *musterv1.FleetJob {
	fj := &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: musterv1.FleetJobSpec{
			Placement: musterv1.FleetJobPlacement{Mode: mode, Placement: musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{member1.Name, member2.Name}}}},
			Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Parallelism: ptr.To(parallelism),
				Completions: ptr.To(completions),
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
					Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyNever,
						NodeSelector:  map[string]string{poolLabel: "work"},
						Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
					},
				},
			}},
		},
	}
	for _, m := range mutate {
		m(fj)
	}
	return fj
}

func indexedMode(fj *musterv1.FleetJob) {
	fj.Spec.Template.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
}

// lasting makes the pods run for d before they succeed.
func lasting(d time.Duration) func(*musterv1.FleetJob) {
	return func(fj *musterv1.FleetJob) {
		t := &fj.Spec.Template.Spec.Template
		t.Labels["e2e.muster.dev/outcome"] = "Succeeded"
		t.Annotations = map[string]string{"e2e.muster.dev/delay": d.String()}
	}
}

func create(t *testing.T, fj *musterv1.FleetJob) *musterv1.FleetJob {
	t.Helper()
	if err := fleet.Hub.Client.Create(t.Context(), fj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.Background(), fj) })
	return fj
}

func waitForPhase(t *testing.T, fj *musterv1.FleetJob, phase musterv1.JobPhase, timeout time.Duration) *musterv1.FleetJob {
	t.Helper()
	var got musterv1.FleetJob
	err := framework.Until(t.Context(), timeout, fmt.Sprintf("FleetJob %s to be %s", fj.Name, phase), func(ctx context.Context) (bool, string, error) {
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(fj), &got); err != nil {
			return false, err.Error(), nil
		}
		var parts []string
		for _, c := range got.Status.Clusters {
			parts = append(parts, fmt.Sprintf("%s:%s a=%d s=%d f=%d", c.ClusterName, c.Phase, c.Active, c.Succeeded, c.Failed))
		}
		return got.Status.Phase == phase, fmt.Sprintf("%s %s", got.Status.Phase, strings.Join(parts, "; ")), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return &got
}

// jobPods lists the pods of the FleetJob's shards in a member, its parts' included (their
// Jobs have names of their own; newFleetJob labels every pod app=<name>).
func jobPods(t *testing.T, m *framework.Cluster, fj *musterv1.FleetJob) []corev1.Pod {
	t.Helper()
	var list corev1.PodList
	if err := m.Client.List(t.Context(), &list, client.InNamespace(ns), client.MatchingLabels{"app": fj.Name}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func running(pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			n++
		}
	}
	return n
}

// succeededIndexes counts the fleet-wide index of every succeeded pod in both members.
func succeededIndexes(t *testing.T, fj *musterv1.FleetJob) map[int]int {
	t.Helper()
	seen := map[int]int{}
	for _, m := range fleet.Members {
		for _, p := range jobPods(t, m, fj) {
			if p.Status.Phase != corev1.PodSucceeded {
				continue
			}
			i, err := strconv.Atoi(p.Annotations[musterv1.GlobalIndexAnnotation])
			if err != nil {
				t.Fatalf("pod %s in %s has no fleet-wide index: %v", p.Name, m.Name, p.Annotations)
			}
			seen[i]++
		}
	}
	return seen
}

func checkEveryIndexOnce(t *testing.T, fj *musterv1.FleetJob, completions int) {
	t.Helper()
	seen := succeededIndexes(t, fj)
	for i := range completions {
		if seen[i] != 1 {
			t.Errorf("index %d succeeded %d times", i, seen[i])
		}
	}
	if len(seen) != completions {
		t.Errorf("%d distinct indexes succeeded, want %d: %v", len(seen), completions, seen)
	}
}

func TestDividedIndexedRunsEveryFleetIndexOnce(t *testing.T) {
	t.Parallel()
	fj := create(t, newFleetJob("divided", musterv1.PlacementDivided, 4, 20, indexedMode))
	done := waitForPhase(t, fj, musterv1.JobComplete, 2*time.Minute)
	checkEveryIndexOnce(t, fj, 20)
	if done.Status.Succeeded != 20 || len(done.Status.Clusters) != 2 {
		t.Fatalf("hub status %+v", done.Status)
	}
	var ranges []string
	for _, c := range done.Status.Clusters {
		ranges = append(ranges, c.CompletedIndexes)
	}
	slices.Sort(ranges)
	if !slices.Equal(ranges, []string{"0-9", "10-19"}) {
		t.Errorf("per-cluster completed indexes %v, want 0-9 and 10-19", ranges)
	}
	// The member Jobs ran under the agent: kube-controller-manager leaves managedBy alone.
	for _, m := range fleet.Members {
		var job batchv1.Job
		if err := m.Client.Get(t.Context(), client.ObjectKeyFromObject(fj), &job); err != nil {
			t.Fatal(err)
		}
		if ptr.Deref(job.Spec.ManagedBy, "") != musterv1.AgentManagedBy || job.Status.Succeeded != 10 {
			t.Errorf("%s shard: managedBy %v, succeeded %d", m.Name, job.Spec.ManagedBy, job.Status.Succeeded)
		}
	}
	out, err := muster.Musterctl(t.Context(), fleet.Hub, "describe", "fleetjob", fj.Name, "-n", ns)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "TOTAL Complete - 20 0 20 0") {
		t.Errorf("musterctl describe fleetjob:\n%s", out)
	}
}

func TestDuplicateCompletesInEveryCluster(t *testing.T) {
	t.Parallel()
	fj := create(t, newFleetJob("duplicate", musterv1.PlacementDuplicate, 2, 3))
	done := waitForPhase(t, fj, musterv1.JobComplete, 2*time.Minute)
	if done.Status.Succeeded != 6 {
		t.Errorf("succeeded %d, want 3 in each of 2 clusters", done.Status.Succeeded)
	}
	for _, c := range done.Status.Clusters {
		if c.Phase != musterv1.JobComplete || c.Succeeded != 3 {
			t.Errorf("cluster %s: %s with %d succeeded", c.ClusterName, c.Phase, c.Succeeded)
		}
	}

	// Deleting the FleetJob removes every shard and its pods.
	if err := fleet.Hub.Client.Delete(t.Context(), fj); err != nil {
		t.Fatal(err)
	}
	err := framework.Until(t.Context(), 2*time.Minute, "the FleetJob, its shards and pods gone", func(ctx context.Context) (bool, string, error) {
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(fj), &musterv1.FleetJob{}); !apierrors.IsNotFound(err) {
			return false, "FleetJob still on the hub", nil
		}
		for _, m := range fleet.Members {
			if err := m.Client.Get(ctx, client.ObjectKeyFromObject(fj), &batchv1.Job{}); !apierrors.IsNotFound(err) {
				return false, "shard Job still in " + m.Name, nil
			}
			if n := len(jobPods(t, m, fj)); n > 0 {
				return false, fmt.Sprintf("%d pods still in %s", n, m.Name), nil
			}
		}
		return true, "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestPodFailurePolicyFailsTheFleetAndStopsTheOtherShard(t *testing.T) {
	t.Parallel()
	fj := create(t, newFleetJob("fail-on-42", musterv1.PlacementDuplicate, 5, 5, lasting(5*time.Minute), func(fj *musterv1.FleetJob) {
		spec := &fj.Spec.Template.Spec
		spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action:      batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
		}}}
		pod := &spec.Template
		pod.Annotations["e2e.muster.dev/exit-code"] = "42"
		// One pod per node: member2's five pods must use its failing node too.
		pod.Spec.NodeSelector = nil
		pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: poolLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{"work", "failing"}}}}},
		}}}
		pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5")}
	}))
	failed := waitForPhase(t, fj, musterv1.JobFailed, 2*time.Minute)
	for _, c := range failed.Status.Conditions {
		if c.Type == musterv1.FleetJobFailed && !strings.Contains(c.Message, member2.Name) {
			t.Errorf("Failed condition %q does not name %s", c.Message, member2.Name)
		}
	}
	var shard batchv1.Job
	if err := member2.Client.Get(t.Context(), client.ObjectKeyFromObject(fj), &shard); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(shard.Status.Conditions, func(c batchv1.JobCondition) bool {
		return c.Type == batchv1.JobFailed && c.Reason == batchv1.JobReasonPodFailurePolicy
	}) {
		t.Errorf("member2 shard conditions %+v: want Failed by PodFailurePolicy", shard.Status.Conditions)
	}
	// The member Job's Warning reaches the hub through member2's agent, and describe
	// shows it among the hub's events.
	relayed := regexp.MustCompile(fmt.Sprintf(`\nWarning PodFailurePolicy \S+ muster-agent %s: Job %s/%s: `, member2.Name, ns, fj.Name))
	var desc string
	err := framework.Until(t.Context(), 30*time.Second, "describe shows member2's event", func(ctx context.Context) (bool, string, error) {
		if out, err := muster.Musterctl(ctx, fleet.Hub, "describe", "fj", fj.Name, "-n", ns); err == nil {
			desc = out
		}
		return relayed.MatchString(squashed(desc)), "", nil
	})
	if err != nil {
		var events corev1.EventList
		_ = fleet.Hub.Client.List(t.Context(), &events, client.InNamespace(musterv1.MemberNamespace(member2.Name)))
		var seen []string
		for _, ev := range events.Items {
			seen = append(seen, fmt.Sprintf("%s %s %s/%s: %s", ev.Type, ev.Reason, ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.Message))
		}
		t.Errorf("%v\n%s\nhub events in %s's namespace:\n%s", err, desc, member2.Name, strings.Join(seen, "\n"))
	}
	// member1 had no failure: its shard is suspended and its pods stop.
	err = framework.Until(t.Context(), time.Minute, "member1's pods stopped", func(context.Context) (bool, string, error) {
		n := running(jobPods(t, member1, fj))
		return n == 0, fmt.Sprintf("%d running", n), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAgentKilledMidRunLosesNoCompletionAndAddsNoPod(t *testing.T) {
	fj := create(t, newFleetJob("agent-restart", musterv1.PlacementDivided, 4, 20, indexedMode, lasting(2*time.Second)))
	ctx, cancel := context.WithCancel(t.Context())
	var mu sync.Mutex
	peak := map[string]int{}
	var wg sync.WaitGroup
	for _, m := range fleet.Members {
		wg.Go(func() {
			for ctx.Err() == nil {
				n := running(jobPods(t, m, fj))
				mu.Lock()
				peak[m.Name] = max(peak[m.Name], n)
				mu.Unlock()
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
	time.Sleep(4 * time.Second)
	muster.Agents[member1.Name].Kill()
	time.Sleep(3 * time.Second)
	if err := muster.StartAgent(member1); err != nil {
		t.Fatal(err)
	}
	waitForPhase(t, fj, musterv1.JobComplete, 3*time.Minute)
	cancel()
	wg.Wait()
	checkEveryIndexOnce(t, fj, 20)
	total := len(jobPods(t, member1, fj)) + len(jobPods(t, member2, fj))
	if total != 20 {
		t.Errorf("%d pods for 20 completions without a failure", total)
	}
	for m, n := range peak {
		if n > 2 {
			t.Errorf("%s ran %d pods at once; its shard's parallelism is 2", m, n)
		}
	}
	t.Logf("peak running pods per member: %v", peak)
}
