//go:build e2e

package broadcastjob

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

const ns = "default"

// newJob is a hub BroadcastJob over member1 and member2 on the batch pool whose pods
// succeed one second after they run.
func newJob(name string, mutate ...func(*musterv1.BroadcastJob)) *musterv1.BroadcastJob {
	j := &musterv1.BroadcastJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: musterv1.BroadcastJobSpec{
			Placement: &musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{member1.Name, member2.Name}}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					NodeSelector:  map[string]string{poolLabel: "batch"},
					Containers:    []corev1.Container{{Name: "probe", Image: "busybox"}},
				},
			},
		},
	}
	for _, m := range mutate {
		m(j)
	}
	return j
}

// lasting makes the job's pods run for d before they succeed.
func lasting(d time.Duration) func(*musterv1.BroadcastJob) {
	return func(j *musterv1.BroadcastJob) {
		j.Spec.Template.Labels["e2e.muster.dev/outcome"] = "Succeeded"
		j.Spec.Template.Annotations = map[string]string{"e2e.muster.dev/delay": d.String()}
	}
}

// withFailingNode also selects member2's node whose pods fail.
func withFailingNode(j *musterv1.BroadcastJob) {
	j.Spec.Template.Spec.NodeSelector = nil
	j.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: poolLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{"batch", "failing"}}},
		}}},
	}}
}

func create(t *testing.T, j *musterv1.BroadcastJob) *musterv1.BroadcastJob {
	t.Helper()
	if err := fleet.Hub.Client.Create(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := fleet.Hub.Client.Delete(context.Background(), j); client.IgnoreNotFound(err) != nil {
			t.Logf("cleaning up %s: %v", j.Name, err)
		}
	})
	return j
}

func get(t *testing.T, j *musterv1.BroadcastJob) *musterv1.BroadcastJob {
	t.Helper()
	out := &musterv1.BroadcastJob{}
	if err := fleet.Hub.Client.Get(t.Context(), client.ObjectKeyFromObject(j), out); err != nil {
		t.Fatal(err)
	}
	return out
}

// waitForPhase waits for the hub job's phase and returns it.
func waitForPhase(t *testing.T, j *musterv1.BroadcastJob, phase musterv1.BroadcastJobPhase, timeout time.Duration) *musterv1.BroadcastJob {
	t.Helper()
	var got musterv1.BroadcastJob
	err := framework.Until(t.Context(), timeout, fmt.Sprintf("BroadcastJob %s to be %s", j.Name, phase), func(ctx context.Context) (bool, string, error) {
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(j), &got); err != nil {
			return false, err.Error(), nil
		}
		return got.Status.Phase == phase, fmt.Sprintf("phase %s %+v conditions %s", got.Status.Phase, got.Status.BroadcastCounts, conditions(&got)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return &got
}

func conditions(j *musterv1.BroadcastJob) string {
	var parts []string
	for _, c := range j.Status.Conditions {
		parts = append(parts, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	return strings.Join(parts, " ")
}

func reason(j *musterv1.BroadcastJob, condition string) string {
	if c := meta.FindStatusCondition(j.Status.Conditions, condition); c != nil {
		return c.Reason
	}
	return ""
}

// pods lists the job's pods in a member.
func pods(t *testing.T, member *framework.Cluster, j *musterv1.BroadcastJob) []corev1.Pod {
	t.Helper()
	var list corev1.PodList
	if err := member.Client.List(t.Context(), &list, client.InNamespace(ns), client.MatchingLabels{musterv1.BroadcastJobNameLabel: j.Name}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func active(ps []corev1.Pod) int {
	n := 0
	for _, p := range ps {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			n++
		}
	}
	return n
}

// nodesWithPods returns the sorted node names the pods ran on, failing on a node with two.
func nodesWithPods(t *testing.T, member *framework.Cluster, ps []corev1.Pod) []string {
	t.Helper()
	var nodes []string
	for _, p := range ps {
		if p.Spec.NodeName == "" {
			t.Errorf("%s: pod %s was never scheduled", member.Name, p.Name)
			continue
		}
		if slices.Contains(nodes, p.Spec.NodeName) {
			t.Errorf("%s: node %s has two pods of the job", member.Name, p.Spec.NodeName)
		}
		nodes = append(nodes, p.Spec.NodeName)
	}
	slices.Sort(nodes)
	return nodes
}

func batchNodes(member *framework.Cluster, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s-batch-%d", member.Name, i))
	}
	slices.Sort(out)
	return out
}

// waitForNoActivePods waits until neither member runs a pod of the job.
func waitForNoActivePods(t *testing.T, j *musterv1.BroadcastJob, timeout time.Duration) {
	t.Helper()
	err := framework.Until(t.Context(), timeout, "no active pods of "+j.Name, func(context.Context) (bool, string, error) {
		a, b := active(pods(t, member1, j)), active(pods(t, member2, j))
		return a+b == 0, fmt.Sprintf("%d active in %s, %d in %s", a, member1.Name, b, member2.Name), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func setPaused(t *testing.T, j *musterv1.BroadcastJob, paused bool) {
	t.Helper()
	cur := get(t, j)
	patch := client.MergeFrom(cur.DeepCopy())
	cur.Spec.Paused = paused
	if err := fleet.Hub.Client.Patch(t.Context(), cur, patch); err != nil {
		t.Fatal(err)
	}
}

// waitGone waits until obj no longer exists in c.
func waitGone(t *testing.T, c *framework.Cluster, obj client.Object, timeout time.Duration) {
	t.Helper()
	err := framework.Until(t.Context(), timeout, fmt.Sprintf("%T %s gone from %s", obj, obj.GetName(), c.Name), func(ctx context.Context) (bool, string, error) {
		err := c.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err), fmt.Sprint(err), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// musterctl runs musterctl against the hub.
func musterctl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := muster.Musterctl(t.Context(), fleet.Hub, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
