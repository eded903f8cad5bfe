//go:build e2e

package broadcastjob

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/e2e/framework/local"
)

func TestCompletesOnOneEligibleNodeEach(t *testing.T) {
	j := create(t, newJob("everywhere"))
	// musterctl get broadcastjob -w --exit-on-finish follows the job live and exits 0 once
	// it completed.
	watchCtx, stopWatch := context.WithTimeout(t.Context(), 3*time.Minute)
	defer stopWatch()
	type watchResult struct {
		out string
		err error
	}
	watched := make(chan watchResult, 1)
	go func() {
		out, err := muster.Musterctl(watchCtx, fleet.Hub, "get", "broadcastjob", j.Name, "-n", ns, "-w", "--exit-on-finish")
		watched <- watchResult{out, err}
	}()
	done := waitForPhase(t, j, musterv1.BroadcastJobCompleted, 90*time.Second)
	w := <-watched
	var rows []string
	for _, l := range strings.Split(squash(w.out), "\n") {
		if strings.HasPrefix(l, j.Name+" ") {
			rows = append(rows, l)
		}
	}
	if w.err != nil || len(rows) < 2 || !strings.Contains(rows[len(rows)-1], "Completed") {
		t.Errorf("musterctl get broadcastjob -w --exit-on-finish did not follow the job to completion and exit 0 (%v):\n%s", w.err, w.out)
	}

	for _, m := range []*framework.Cluster{member1, member2} {
		got := nodesWithPods(t, m, pods(t, m, j))
		if want := batchNodes(m, batchPerMember); !slices.Equal(got, want) {
			t.Errorf("%s: pods on %v, want exactly the batch nodes %v", m.Name, got, want)
		}
	}
	if ps := pods(t, member3, j); len(ps) != 0 {
		t.Errorf("member3 is not in the placement but runs %d pods", len(ps))
	}
	want := musterv1.BroadcastCounts{Desired: 2 * batchPerMember, Succeeded: 2 * batchPerMember}
	if done.Status.BroadcastCounts != want || len(done.Status.Clusters) != 2 {
		t.Errorf("hub status %+v with %d clusters, want %+v over 2", done.Status.BroadcastCounts, len(done.Status.Clusters), want)
	}
	for _, c := range done.Status.Clusters {
		if c.Succeeded != batchPerMember || c.Phase != musterv1.BroadcastJobCompleted {
			t.Errorf("cluster %s: %+v phase %s", c.ClusterName, c.BroadcastCounts, c.Phase)
		}
	}
	table := musterctl(t, "describe", "broadcastjob", j.Name, "-n", ns)
	for _, line := range []string{"member1 Completed 10 0 10 0 - 100%", "member2 Completed 10 0 10 0 - 100%", "TOTAL Completed 20 0 20 0 - 100%"} {
		if !strings.Contains(squash(table), line) {
			t.Errorf("musterctl describe broadcastjob lacks %q:\n%s", line, table)
		}
	}
}

func squash(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return strings.Join(lines, "\n")
}

func TestFleetParallelismPercentIsNeverExceeded(t *testing.T) {
	j := create(t, newJob("thirty-percent", lasting(2*time.Second), func(j *musterv1.BroadcastJob) {
		j.Spec.Parallelism = new(intstr.FromString("30%"))
	}))
	// 30% of 20 eligible nodes: 6 pods at most, anywhere in the fleet.
	var peak, samples int
	err := framework.Until(t.Context(), 3*time.Minute, "the job to complete", func(context.Context) (bool, string, error) {
		n := active(pods(t, member1, j)) + active(pods(t, member2, j))
		samples++
		peak = max(peak, n)
		if n > 6 {
			return false, "", fmt.Errorf("%d pods active across the fleet, parallelism 30%% of 20 allows 6", n)
		}
		cur := get(t, j)
		return cur.Status.Phase == musterv1.BroadcastJobCompleted, fmt.Sprintf("%d active, %+v", n, cur.Status.BroadcastCounts), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := get(t, j)
	if got.Status.Succeeded != 20 || got.Status.Parallelism == nil || *got.Status.Parallelism != 6 {
		t.Errorf("status %+v parallelism %v, want 20 succeeded with parallelism 6", got.Status.BroadcastCounts, got.Status.Parallelism)
	}
	t.Logf("peak %d active pods fleet-wide over %d samples (limit 6)", peak, samples)
	if peak < 4 {
		t.Errorf("peak %d active pods: the fleet barely used its parallelism of 6", peak)
	}
}

func TestFailFastStopsEveryCluster(t *testing.T) {
	j := create(t, newJob("fail-fast", lasting(5*time.Minute), withFailingNode, func(j *musterv1.BroadcastJob) {
		j.Spec.FailurePolicy.Type = musterv1.FailureFailFast
	}))
	failed := waitForPhase(t, j, musterv1.BroadcastJobFailedPh, 90*time.Second)
	if reason(failed, musterv1.BroadcastJobFailed) != musterv1.BroadcastJobReasonPodFailed {
		t.Errorf("Failed reason %q, want PodFailed: %s", reason(failed, musterv1.BroadcastJobFailed), conditions(failed))
	}
	// member1 had no failure: its running pods are stopped by the hub, and, as OpenKruise
	// counts them, the pods the job's end stops are failed ones too.
	waitForNoActivePods(t, j, 30*time.Second)
	if got := get(t, j); got.Status.Failed < 2 || got.Status.Succeeded != 0 {
		t.Errorf("hub counts %+v, want the failed pod and the stopped ones failed, none succeeded", got.Status.BroadcastCounts)
	}
}

func TestContinueRunsEveryNodeDespiteAFailure(t *testing.T) {
	j := create(t, newJob("continue", withFailingNode, func(j *musterv1.BroadcastJob) {
		j.Spec.FailurePolicy.Type = musterv1.FailureContinue
	}))
	// Continue means failures do not fail the job (as OpenKruise): it completes, saying
	// how many pods failed.
	done := waitForPhase(t, j, musterv1.BroadcastJobCompleted, 90*time.Second)
	want := musterv1.BroadcastCounts{Desired: 2*batchPerMember + 1, Succeeded: 2 * batchPerMember, Failed: 1}
	if done.Status.BroadcastCounts != want {
		t.Errorf("status %+v %s, want %+v", done.Status.BroadcastCounts, conditions(done), want)
	}
}

func TestPauseStopsCreatingEverywhereAndResumes(t *testing.T) {
	j := create(t, newJob("pause", lasting(3*time.Second), func(j *musterv1.BroadcastJob) {
		j.Spec.Parallelism = new(intstr.FromInt32(4))
	}))
	err := framework.Until(t.Context(), time.Minute, "some pods in both members", func(context.Context) (bool, string, error) {
		a, b := len(pods(t, member1, j)), len(pods(t, member2, j))
		return a > 0 && b > 0, fmt.Sprintf("%d and %d pods", a, b), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	setPaused(t, j, true)
	waitForPhase(t, j, musterv1.BroadcastJobPausedPh, 30*time.Second)
	// Give both shards time to see the pause, then no pod may appear anywhere.
	time.Sleep(2 * time.Second)
	before := len(pods(t, member1, j)) + len(pods(t, member2, j))
	time.Sleep(8 * time.Second)
	if after := len(pods(t, member1, j)) + len(pods(t, member2, j)); after != before {
		t.Fatalf("a paused job went from %d to %d pods", before, after)
	}
	if before >= 2*batchPerMember {
		t.Fatalf("the job created all %d pods before the pause took effect; the test proves nothing", before)
	}
	setPaused(t, j, false)
	done := waitForPhase(t, j, musterv1.BroadcastJobCompleted, 3*time.Minute)
	if done.Status.Succeeded != 2*batchPerMember {
		t.Errorf("after resuming: %+v", done.Status.BroadcastCounts)
	}
}

func TestFailurePolicyPausePausesTheFleet(t *testing.T) {
	j := create(t, newJob("pause-on-failure", lasting(5*time.Minute), withFailingNode, func(j *musterv1.BroadcastJob) {
		j.Spec.FailurePolicy.Type = musterv1.FailurePause
	}))
	paused := waitForPhase(t, j, musterv1.BroadcastJobPausedPh, 90*time.Second)
	if !paused.Spec.Paused || reason(paused, musterv1.BroadcastJobPaused) != musterv1.BroadcastJobReasonPausedOnFailure {
		t.Errorf("spec.paused %v, Paused reason %q: want the hub job itself paused on the failure", paused.Spec.Paused, reason(paused, musterv1.BroadcastJobPaused))
	}
	// Both shards carry the pause.
	for _, m := range []*framework.Cluster{member1, member2} {
		err := framework.Until(t.Context(), 30*time.Second, m.Name+" shard paused", func(ctx context.Context) (bool, string, error) {
			var shard musterv1.BroadcastJob
			if err := m.Client.Get(ctx, client.ObjectKeyFromObject(j), &shard); err != nil {
				return false, err.Error(), nil
			}
			return shard.Spec.Paused, "", nil
		})
		if err != nil {
			t.Error(err)
		}
	}
}

func TestNeverServesNewNodesAndNewClusters(t *testing.T) {
	j := create(t, newJob("never", func(j *musterv1.BroadcastJob) {
		j.Spec.CompletionPolicy.Type = musterv1.CompletionNever
		j.Spec.Placement = &musterv1.Placement{} // every cluster, the ones that join later too
	}))
	waitForSucceeded(t, j, 2*batchPerMember)

	extra := local.NewNode("member2-batch-late")
	extra.Labels[poolLabel] = "batch"
	if err := local.CreateNodes(t.Context(), member2.Clientset, extra); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = member2.Client.Delete(context.Background(), extra) })
	waitForSucceeded(t, j, 2*batchPerMember+1)

	if err := muster.JoinAndAccept(t.Context(), []*framework.Cluster{member3}); err != nil {
		t.Fatal(err)
	}
	got := waitForSucceeded(t, j, 2*batchPerMember+3)
	if nodes := nodesWithPods(t, member3, pods(t, member3, j)); !slices.Equal(nodes, []string{"member3-batch-0", "member3-batch-1"}) {
		t.Errorf("member3 pods on %v", nodes)
	}
	if got.Status.Phase != musterv1.BroadcastJobRunning || len(got.Status.Clusters) != 3 {
		t.Errorf("phase %s with %d clusters: a Never job keeps running, now over 3 clusters", got.Status.Phase, len(got.Status.Clusters))
	}
}

func waitForSucceeded(t *testing.T, j *musterv1.BroadcastJob, n int32) *musterv1.BroadcastJob {
	t.Helper()
	var got *musterv1.BroadcastJob
	err := framework.Until(t.Context(), 2*time.Minute, fmt.Sprintf("%d pods succeeded", n), func(context.Context) (bool, string, error) {
		got = get(t, j)
		return got.Status.Succeeded == n, fmt.Sprintf("%+v %s", got.Status.BroadcastCounts, conditions(got)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestActiveDeadlineFailsTheFleet(t *testing.T) {
	j := create(t, newJob("deadline", lasting(5*time.Minute), func(j *musterv1.BroadcastJob) {
		j.Spec.CompletionPolicy.ActiveDeadlineSeconds = new(int64(10))
	}))
	failed := waitForPhase(t, j, musterv1.BroadcastJobFailedPh, time.Minute)
	if reason(failed, musterv1.BroadcastJobFailed) != musterv1.BroadcastJobReasonDeadlineExceeded {
		t.Errorf("Failed reason %q, want DeadlineExceeded", reason(failed, musterv1.BroadcastJobFailed))
	}
	if ran := failed.Status.CompletionTime.Sub(failed.Status.StartTime.Time); ran < 10*time.Second || ran > 20*time.Second {
		t.Errorf("failed after %s, deadline 10s", ran)
	}
	waitForNoActivePods(t, j, 30*time.Second)
}

func TestTTLRemovesHubJobShardsAndPods(t *testing.T) {
	j := create(t, newJob("ttl", func(j *musterv1.BroadcastJob) {
		j.Spec.CompletionPolicy.TTLSecondsAfterFinished = new(int32(5))
	}))
	waitForPhase(t, j, musterv1.BroadcastJobCompleted, 90*time.Second)
	waitGone(t, fleet.Hub, &musterv1.BroadcastJob{ObjectMeta: j.ObjectMeta}, time.Minute)
	for _, m := range []*framework.Cluster{member1, member2} {
		waitGone(t, m, &musterv1.BroadcastJob{ObjectMeta: j.ObjectMeta}, time.Minute)
		err := framework.Until(t.Context(), time.Minute, m.Name+" pods gone", func(context.Context) (bool, string, error) {
			n := len(pods(t, m, j))
			return n == 0, fmt.Sprintf("%d pods left", n), nil
		})
		if err != nil {
			t.Error(err)
		}
	}
}

func TestRestartsMidRunNeverDoublePodANode(t *testing.T) {
	j := create(t, newJob("restarts", lasting(2*time.Second), func(j *musterv1.BroadcastJob) {
		j.Spec.Parallelism = new(intstr.FromInt32(6))
	}))
	// Watch every pod name that ever exists per node while agents and hub restart.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var mu sync.Mutex
	seen := map[string]map[string]bool{} // node → pod names
	var wg sync.WaitGroup
	for _, m := range []*framework.Cluster{member1, member2} {
		wg.Go(func() {
			for ctx.Err() == nil {
				for _, p := range pods(t, m, j) {
					node := p.Annotations[musterv1.NodeAnnotation]
					mu.Lock()
					if seen[node] == nil {
						seen[node] = map[string]bool{}
					}
					seen[node][string(p.UID)] = true
					mu.Unlock()
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
	time.Sleep(3 * time.Second)
	muster.Agents[member1.Name].Kill()
	if err := muster.StartAgent(member1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	muster.HubProc.Kill()
	if err := muster.StartHubProcess("--leader-elect=false"); err != nil {
		t.Fatal(err)
	}
	done := waitForPhase(t, j, musterv1.BroadcastJobCompleted, 3*time.Minute)
	cancel()
	wg.Wait()
	for node, uids := range seen {
		if len(uids) != 1 {
			t.Errorf("node %s had %d different pods of the job", node, len(uids))
		}
	}
	if len(seen) != 2*batchPerMember || done.Status.Succeeded != 2*batchPerMember {
		t.Errorf("pods on %d nodes, %d succeeded; want %d each", len(seen), done.Status.Succeeded, 2*batchPerMember)
	}
}
