//go:build e2ekind

package kindfleet

import (
	"context"
	"fmt"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/indexset"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/e2e/framework/kind"
)

const (
	// partitionToleration is how long the partition test's jobs tolerate an unreachable
	// cluster. For the fenced one the hub lengthens it: with the hub's defaults (a grace
	// period of 40 s, a fencing margin of 60 s) the agent stops its pods after 20 s
	// without a renewal and the hub moves them 60 s later.
	partitionToleration = 5 * time.Second
	// partitionAllowance is how long, from the cut, the hub may take to move both jobs:
	// the fenced one's 80 s from the last renewal before the cut, and room.
	partitionAllowance = 2 * time.Minute
	// partitionCertificateNeed is how much of its certificate's lifetime the agent needs
	// left when it is cut off: enough to reach the hub again after the moves, when it
	// renews the certificate at once if that is due.
	partitionCertificateNeed = partitionAllowance
)

// TestAPartitionedMembersWorkMovesAndItsReturnDeletesIt cuts member2's node off from the
// hub's network while two Divided Indexed FleetJobs run two indexes in each member: the
// agent and the pods go on running, only what they send toward the hub is rejected. The
// hub moves member2's unfinished indexes to member1 for both jobs: for the one without
// fencing while member2's copies still run (at-least-once, as the built-in Job controller
// is on an unreachable node), for the one with podReplacementPolicy: Failed only after
// member2's agent, not having renewed its Lease, has stopped its pods and their grace
// period is over, by the two API servers' timestamps. Both jobs complete with each index
// counted once in the hub, and member2's agent, reaching the hub again, deletes the
// shards withdrawn from it.
func TestAPartitionedMembersWorkMovesAndItsReturnDeletesIt(t *testing.T) {
	muster(t)
	member1, member2 := fleet.Members[0], fleet.Members[1]
	waitAgentCertificateLeft(t, member2, partitionCertificateNeed)

	// Each pod runs long enough to be running still when its job moves, from its start
	// a few seconds before the cut: member2's copy without fencing, the 45 s or so the
	// move takes, overlaps member1's replacement; with fencing, what stops member2's copy
	// is the fence, 20 s at most from the cut.
	plain := partitionedJob("partitioned", "60s")
	fenced := partitionedJob("partitioned-fenced", "40s")
	fenced.Spec.Template.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
	fenced.Spec.Template.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](5)
	pods := map[string]*framework.PodLog{}
	for _, fj := range []*musterv1.FleetJob{plain, fenced} {
		for _, m := range fleet.Members {
			pods[fj.Name+"/"+m.Name] = framework.WatchPods(t, m, fj.Namespace, "app="+fj.Name)
		}
		createOnHub(t, fj)
	}
	for _, fj := range []*musterv1.FleetJob{plain, fenced} {
		for _, m := range fleet.Members {
			waitPodsRunning(t, m, fj, 2)
		}
	}

	heal := partition(t, member2)
	cut := time.Now()
	if _, err := framework.WaitForClusterCondition(t.Context(), fleet.Hub, member2.Name, musterv1.MemberClusterAvailable, metav1.ConditionUnknown, partitionAllowance); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s Unknown %s after the cut", member2.Name, time.Since(cut).Round(time.Second))
	for _, fj := range []*musterv1.FleetJob{plain, fenced} {
		waitEvicted(t, fj, member2.Name, cut)
	}
	// Before the agent returns and deletes it: member2's fenced Job ended itself.
	wantFencedJob(t, member2, fenced)
	heal()
	healed := time.Now()
	if _, err := framework.WaitForClusterCondition(t.Context(), fleet.Hub, member2.Name, musterv1.MemberClusterAvailable, metav1.ConditionTrue, 2*time.Minute); err != nil {
		t.Fatalf("%v\nagent log:\n%s", err, agentLog(t.Context(), member2))
	}
	t.Logf("%s Available %s after the cut was healed", member2.Name, time.Since(healed).Round(time.Second))

	for _, fj := range []*musterv1.FleetJob{plain, fenced} {
		waitComplete(t, fj, 3*time.Minute, nil)
		wantIndexesCountedOnce(t, fj, cut)
		framework.LogCopies(t, fj.Name, pods[fj.Name+"/"+member2.Name].Seen(), pods[fj.Name+"/"+member1.Name].Seen(), cut)
	}
	framework.ExpectFenced(t, fenced.Name, pods[fenced.Name+"/"+member2.Name].Seen(), pods[fenced.Name+"/"+member1.Name].Seen(), cut)
	wantShardsDeleted(t, member2, plain, fenced)
}

// partitionedJob is a Divided Indexed FleetJob of four pods running for d, two at once
// in each member, tolerating an unreachable cluster for partitionToleration. Its pods
// carry app=<name> in every member, whichever Job runs them.
func partitionedJob(name, d string) *musterv1.FleetJob {
	fj := indexed(dividedJob(name, 4, 4, "sleep", d))
	fj.Spec.Placement.Tolerations = []corev1.Toleration{{
		Key: musterv1.UnreachableTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute,
		TolerationSeconds: ptr.To(int64(partitionToleration / time.Second)),
	}}
	fj.Spec.Template.Spec.Template.Labels = map[string]string{"app": name}
	return fj
}

// partition cuts member m's node off from the hub: in the node container's network
// namespace, every TCP packet toward the hub's address is answered with a reset, those
// the node forwards from its pods (the agent's) and those it sends itself. The agent and
// m's pods keep running, and the test still reaches m's API server through its
// published port. heal removes the rules; the test's end does too, if it was not called.
func partition(t *testing.T, m *framework.Cluster) (heal func()) {
	t.Helper()
	raw, err := fleet.Provider.(*kind.Provider).InternalAPIServer(fleet.Hub.Name)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	node := kind.NamePrefix + m.Name + "-control-plane"
	rules := func(op string) error {
		for _, chain := range []string{"FORWARD", "OUTPUT"} {
			args := []string{"exec", node, "iptables", op, chain, "-d", u.Hostname(), "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"}
			if out, err := exec.Command("docker", args...).CombinedOutput(); err != nil {
				return fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, out)
			}
		}
		return nil
	}
	if err := rules("-I"); err != nil {
		t.Fatal(err)
	}
	healed := false
	heal = func() {
		if healed {
			return
		}
		healed = true
		if err := rules("-D"); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(heal)
	return heal
}

// waitPodsRunning waits until n pods of fj run in member m.
func waitPodsRunning(t *testing.T, m *framework.Cluster, fj *musterv1.FleetJob, n int) {
	t.Helper()
	err := framework.Until(t.Context(), time.Minute, fmt.Sprintf("%d pods of %s running in %s", n, fj.Name, m.Name), func(ctx context.Context) (bool, string, error) {
		var pods corev1.PodList
		if err := m.Client.List(ctx, &pods, client.InNamespace(fj.Namespace), client.MatchingLabels{"app": fj.Name}); err != nil {
			return false, err.Error(), nil
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running >= n, fmt.Sprintf("%d running", running), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// waitEvicted waits until the hub has evicted fj's shard from cluster, and logs when.
func waitEvicted(t *testing.T, fj *musterv1.FleetJob, cluster string, cut time.Time) {
	t.Helper()
	var at time.Time
	err := framework.Until(t.Context(), partitionAllowance, fmt.Sprintf("FleetJob %s's shard in %s to be evicted", fj.Name, cluster), func(ctx context.Context) (bool, string, error) {
		var got musterv1.FleetJob
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(fj), &got); err != nil {
			return false, err.Error(), nil
		}
		for _, c := range got.Status.Clusters {
			if c.ClusterName == cluster && c.Phase == musterv1.JobEvicted && c.Eviction != nil {
				at = c.Eviction.Time.Time
				return true, "", nil
			}
		}
		return false, fmt.Sprint(got.Status.Clusters), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s's shard evicted %s after the cut", fj.Name, cluster, at.Sub(cut).Round(time.Second))
}

// wantFencedJob checks that member m's Job of the fenced FleetJob ended itself Failed,
// with reason Fenced.
func wantFencedJob(t *testing.T, m *framework.Cluster, fj *musterv1.FleetJob) {
	t.Helper()
	var job batchv1.Job
	if err := m.Client.Get(t.Context(), client.ObjectKeyFromObject(fj), &job); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(job.Status.Conditions, func(c batchv1.JobCondition) bool {
		return c.Type == batchv1.JobFailed && c.Reason == musterv1.JobReasonFenced
	}) {
		t.Errorf("%s's Job %s has conditions %+v; want Failed with reason %s", m.Name, job.Name, job.Status.Conditions, musterv1.JobReasonFenced)
	}
}

// wantIndexesCountedOnce checks that the hub counted each of fj's four indexes once over
// its shards, the evicted one's included, and logs when it completed.
func wantIndexesCountedOnce(t *testing.T, fj *musterv1.FleetJob, cut time.Time) {
	t.Helper()
	var got musterv1.FleetJob
	if err := fleet.Hub.Client.Get(t.Context(), client.ObjectKeyFromObject(fj), &got); err != nil {
		t.Fatal(err)
	}
	counted := map[int]int{}
	for _, c := range got.Status.Clusters {
		set := indexset.Parse(c.CompletedIndexes, 4)
		for i := range set.Len() {
			n, _ := set.Nth(i)
			counted[n]++
		}
		t.Logf("%s: %s %s completed %q", fj.Name, c.ClusterName, c.Phase, c.CompletedIndexes)
	}
	for i := range 4 {
		if counted[i] != 1 {
			t.Errorf("%s: index %d counted %d times in the hub's status, want once", fj.Name, i, counted[i])
		}
	}
	if got.Status.Succeeded != 4 {
		t.Errorf("%s counts %d succeeded, want 4", fj.Name, got.Status.Succeeded)
	}
	t.Logf("%s complete %s after the cut", fj.Name, got.Status.CompletionTime.Sub(cut).Round(time.Second))
}

// wantShardsDeleted waits until member m's agent has deleted the Jobs of the jobs'
// shards the hub withdrew from it while it was cut off.
func wantShardsDeleted(t *testing.T, m *framework.Cluster, jobs ...*musterv1.FleetJob) {
	t.Helper()
	err := framework.Until(t.Context(), time.Minute, m.Name+" to delete the withdrawn shards' Jobs", func(ctx context.Context) (bool, string, error) {
		var left []string
		for _, fj := range jobs {
			var job batchv1.Job
			err := m.Client.Get(ctx, client.ObjectKeyFromObject(fj), &job)
			if client.IgnoreNotFound(err) != nil {
				return false, err.Error(), nil
			}
			if err == nil {
				left = append(left, job.Name)
			}
		}
		return len(left) == 0, fmt.Sprintf("%v remain", left), nil
	})
	if err != nil {
		t.Error(err)
	}
}
