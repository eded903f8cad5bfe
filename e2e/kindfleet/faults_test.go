//go:build e2ekind

package kindfleet

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/e2e/framework/kind"
	"github.com/musterhq/muster/e2e/images"
)

func TestHubBroadcastJobRunsOnEveryMemberNode(t *testing.T) {
	muster(t)
	j := &musterv1.BroadcastJob{
		ObjectMeta: metav1.ObjectMeta{Name: "every-node", Namespace: "default"},
		Spec:       musterv1.BroadcastJobSpec{Placement: ptr.To(members()), Template: workloadPod("sleep", "1s")},
	}
	createOnHub(t, j)
	wantBroadcastOncePerNode(t, j, 2*time.Minute)
}

// wantBroadcastOncePerNode waits until j completes and checks that each member's one
// node ran it exactly once.
func wantBroadcastOncePerNode(t *testing.T, j *musterv1.BroadcastJob, timeout time.Duration) {
	t.Helper()
	ctx := t.Context()
	err := framework.Until(ctx, timeout, "BroadcastJob "+j.Name+" to complete", func(ctx context.Context) (bool, string, error) {
		var got musterv1.BroadcastJob
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(j), &got); err != nil {
			return false, err.Error(), nil
		}
		if got.Status.Phase == musterv1.BroadcastJobFailedPh {
			return false, "", fmt.Errorf("failed: %v", got.Status.Conditions)
		}
		return got.Status.Phase == musterv1.BroadcastJobCompleted, fmt.Sprintf("%s %+v", got.Status.Phase, got.Status.BroadcastCounts), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range fleet.Members {
		var pods corev1.PodList
		if err := m.Client.List(ctx, &pods, client.InNamespace("default"), client.HasLabels{musterv1.BroadcastJobNameLabel}); err != nil {
			t.Fatal(err)
		}
		succeeded := 0
		for _, p := range pods.Items {
			if p.Labels[musterv1.BroadcastJobNameLabel] == j.Name && p.Status.Phase == corev1.PodSucceeded {
				succeeded++
			}
		}
		if succeeded != 1 {
			t.Errorf("%s (one node) has %d succeeded pods of BroadcastJob %s, want 1", m.Name, succeeded, j.Name)
		}
	}
}

// TestUpgradeHubThenAgentsWithAJobInFlightLosesNoCompletion rolls the hub, then every
// agent, to newly built images of another version while an Indexed job runs, each the way
// it was installed (helm upgrade of the hub and member1's agent, musterctl upgrade of
// member2's), with a BroadcastJob and a cron every minute beside it, whose slot falls in
// the hub's rollout: the hub's replicas are replaced one at a time (the leader hands
// over), each agent pod is replaced and the new agent picks the Job up where the old one
// left it. Every index completes once, no index ever has two pods at a time, each node runs
// the BroadcastJob once, every slot from the first after the cron's creation to the end
// has exactly one run, and each agent then reports the new version, which the hub
// supports. The suite's admission probe writes through the whole rollout.
func TestUpgradeHubThenAgentsWithAJobInFlightLosesNoCompletion(t *testing.T) {
	m := muster(t)
	ctx := t.Context()
	start := time.Now()
	hubImage, err := images.BuildScratchVersion(ctx, images.Hub, "muster.local/muster-hub", upgradedVersion)
	if err != nil {
		t.Fatal(err)
	}
	newAgentImage, err := images.BuildScratchVersion(ctx, images.Agent, "muster.local/muster-agent", upgradedVersion)
	if err != nil {
		t.Fatal(err)
	}
	p := fleet.Provider.(*kind.Provider)
	if err := p.LoadImageArchive(fleet.Hub.Name, images.Archive(ctx, hubImage)); err != nil {
		t.Fatal(err)
	}
	for _, member := range fleet.Members {
		if err := p.LoadImageArchive(member.Name, images.Archive(ctx, newAgentImage)); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("images of %s built and loaded in %s", upgradedVersion, time.Since(start).Round(time.Second))

	// Three indexes a member, one at a time: the job runs through the hub's rollout and
	// both agents' upgrades.
	const completions = 6
	fj := indexed(dividedJob("upgrade", completions, 2, "sleep", "8s"))
	// Beside it, a BroadcastJob whose pods outlast the hub's rollout, and a cron every
	// minute, whose slot falls in the hub's rollout.
	bj := &musterv1.BroadcastJob{
		ObjectMeta: metav1.ObjectMeta{Name: "upgrade-every-node", Namespace: "default"},
		Spec:       musterv1.BroadcastJobSpec{Placement: ptr.To(members()), Template: workloadPod("sleep", "30s")},
	}
	cj := everyMinute("upgrade-cron")
	createOnHub(t, fj, bj, cj)
	firstSlot := time.Now().Add(15 * time.Second).Truncate(time.Minute).Add(time.Minute)
	waitJobPodRunning(t, fleet.Members[0], fj.Name)
	select {
	case <-time.After(time.Until(firstSlot.Add(-5 * time.Second))):
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}

	leaderBefore := leaderPod(t)
	upgradeStart := time.Now()
	out, err := upgrade(t, m, fleet.Hub, hubImage, "3m")
	if err != nil {
		t.Fatal(err)
	}
	rolled := time.Now()
	t.Logf("hub rolled out in %s: %s", rolled.Sub(upgradeStart).Round(time.Second), lastLine(out))
	for _, member := range fleet.Members {
		began := time.Now()
		out, err := upgrade(t, m, member, newAgentImage, "2m")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s rolled out in %s: %s", member.Name, time.Since(began).Round(time.Second), lastLine(out))
	}
	// A later re-join deploys the agent this fleet now runs.
	agentImage, deployedVersion = newAgentImage, upgradedVersion

	// Watch both members until the job completes: at no time two live pods of one index.
	waitComplete(t, fj, 3*time.Minute, func(ctx context.Context) error {
		for _, m := range fleet.Members {
			pods, err := jobPodsIn(ctx, m, fj.Name)
			if err != nil {
				return nil // the next poll looks again
			}
			live := map[string]string{}
			for _, p := range pods {
				if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
					continue
				}
				index := p.Annotations[batchv1.JobCompletionIndexAnnotation]
				if other, dup := live[index]; dup {
					return fmt.Errorf("%s: index %s has two live pods, %s and %s", m.Name, index, other, p.Name)
				}
				live[index] = p.Name
			}
		}
		return nil
	})
	wantEachIndexSucceededOnce(t, fj.Name, completions)
	wantBroadcastOncePerNode(t, bj, 2*time.Minute)
	wantOneRunASlot(t, cj, firstSlot, time.Now().Truncate(time.Minute))
	for _, member := range fleet.Members {
		wantAgentVersion(t, member.Name, upgradedVersion)
	}
	// The rollout is done (as kubectl rollout status says) once the new pods are ready
	// and the old ones terminating; the old leader leads until it has drained and stopped.
	var lease *coordinationv1.Lease
	err = framework.Until(ctx, time.Minute, "a new hub pod to lead", func(ctx context.Context) (bool, string, error) {
		lease, err = fleet.Hub.Clientset.CoordinationV1().Leases("muster-system").Get(ctx, "muster-hub", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		holder := ptr.Deref(lease.Spec.HolderIdentity, "")
		return holder != "" && !strings.HasPrefix(holder, leaderBefore+"_"), "held by " + holder, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	acquired := "at an unknown time"
	if lease.Spec.AcquireTime != nil {
		acquired = fmt.Sprintf("%s after the rollout", lease.Spec.AcquireTime.Sub(rolled).Round(time.Second))
	}
	t.Logf("leader %s handed over to %s, acquired %s (%d transitions)", leaderBefore, leaderPod(t), acquired, ptr.Deref(lease.Spec.LeaseTransitions, 0))
}

// upgrade rolls c's hub or agent to image the way it was installed: helm upgrade of its
// release, or musterctl upgrade.
func upgrade(t *testing.T, m *framework.Muster, c *framework.Cluster, image, timeout string) (string, error) {
	t.Helper()
	if release, ok := m.HelmReleases[c.Name]; ok {
		return m.HelmUpgrade(t.Context(), c, release, map[string]any{"image": framework.ImageValues(image)}, timeout)
	}
	component := "agent"
	if c == fleet.Hub {
		component = "hub"
	}
	return m.Musterctl(t.Context(), c, "upgrade", component, "--image", image, "--timeout", timeout)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestFleetCronJobFiresOnTheRealClockOnceWhenTheLeaderPodDies runs a cron every minute
// from the hub Deployment, deletes the leading hub pod as a slot falls due, and expects
// exactly one run for that slot, completed in the members.
func TestFleetCronJobFiresOnTheRealClockOnceWhenTheLeaderPodDies(t *testing.T) {
	muster(t)
	ctx := t.Context()
	cj := everyMinute("every-minute")
	createOnHub(t, cj)

	// The next slot at least 15 s away, so the cron is scheduled before it.
	slot := time.Now().Add(15 * time.Second).Truncate(time.Minute).Add(time.Minute)
	err := framework.Until(ctx, 30*time.Second, "the hub to schedule "+slot.Format(time.RFC3339), func(ctx context.Context) (bool, string, error) {
		var got musterv1.FleetCronJob
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(cj), &got); err != nil {
			return false, err.Error(), nil
		}
		next := got.Status.NextScheduleTime
		return next != nil && next.Time.Equal(slot), fmt.Sprint(next), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	leader := leaderPod(t)
	select {
	case <-time.After(time.Until(slot.Add(20 * time.Millisecond))):
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	hubPods := fleet.Hub.Clientset.CoreV1().Pods("muster-system")
	if err := hubPods.Delete(ctx, leader, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()

	var run *musterv1.FleetJob
	err = framework.Until(ctx, 2*time.Minute, "the slot's run to complete after the failover", func(ctx context.Context) (bool, string, error) {
		runs, err := runsBySlot(ctx, cj)
		if err != nil {
			return false, err.Error(), nil
		}
		switch slotRuns := runs[slot.Unix()]; len(slotRuns) {
		case 0:
			return false, "no run yet", nil
		case 1:
			run = slotRuns[0]
			return run.Status.Phase == musterv1.JobComplete, string(run.Status.Phase), nil
		default:
			return false, "", fmt.Errorf("%d runs for slot %s", len(slotRuns), slot.Format(time.RFC3339))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("leader %s deleted %s after the slot; run %s created %s after the slot and completed", leader, killed.Sub(slot).Round(time.Millisecond), run.Name, run.CreationTimestamp.Sub(slot))
}

// leaderPod is the hub pod holding the leader Lease (its identity starts with the pod name).
func leaderPod(t *testing.T) string {
	t.Helper()
	lease, err := fleet.Hub.Clientset.CoordinationV1().Leases("muster-system").Get(t.Context(), "muster-hub", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the hub's leader Lease: %v", err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Fatal("no hub replica leads")
	}
	pod, _, _ := strings.Cut(*lease.Spec.HolderIdentity, "_")
	return pod
}

// waitJobPodRunning waits until a pod of the job runs in member m.
func waitJobPodRunning(t *testing.T, m *framework.Cluster, job string) {
	t.Helper()
	err := framework.Until(t.Context(), time.Minute, "a pod of the job running in "+m.Name, func(ctx context.Context) (bool, string, error) {
		pods, err := jobPodsIn(ctx, m, job)
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning {
				return true, "", err
			}
		}
		return false, fmt.Sprintf("%d pods", len(pods)), err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// wantEachIndexSucceededOnce checks that every fleet-wide index of the job succeeded in
// exactly one pod over all members.
func wantEachIndexSucceededOnce(t *testing.T, job string, completions int) {
	t.Helper()
	succeeded := map[string]int{}
	for _, m := range fleet.Members {
		pods, err := jobPodsIn(t.Context(), m, job)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods {
			if p.Status.Phase == corev1.PodSucceeded {
				// The fleet-wide index: each member's Job numbers its own indexes from 0.
				succeeded[p.Annotations[musterv1.GlobalIndexAnnotation]]++
			}
		}
	}
	for i := range completions {
		if n := succeeded[fmt.Sprint(i)]; n != 1 {
			t.Errorf("index %d succeeded %d times, want once (all: %v)", i, n, succeeded)
		}
	}
}

func jobPodsIn(ctx context.Context, m *framework.Cluster, job string) ([]corev1.Pod, error) {
	var pods corev1.PodList
	err := m.Client.List(ctx, &pods, client.InNamespace("default"), client.MatchingLabels{batchv1.JobNameLabel: job})
	return pods.Items, err
}

// everyMinute is a FleetCronJob running a short job on both members every minute.
func everyMinute(name string) *musterv1.FleetCronJob {
	return &musterv1.FleetCronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: musterv1.FleetCronJobSpec{
			Schedule: "*/1 * * * *",
			JobTemplate: &musterv1.FleetJobTemplateSpec{Spec: musterv1.FleetJobSpec{
				Placement: musterv1.FleetJobPlacement{Mode: musterv1.PlacementDivided, Placement: members()},
				Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
					Completions: ptr.To[int32](2), Parallelism: ptr.To[int32](2),
					Template: workloadPod("sleep", "1s"),
				}},
			}},
		},
	}
}

// runsBySlot lists cj's runs by the slot each was made for, in Unix seconds (a time.Time
// key would compare locations too).
func runsBySlot(ctx context.Context, cj *musterv1.FleetCronJob) (map[int64][]*musterv1.FleetJob, error) {
	var list musterv1.FleetJobList
	if err := fleet.Hub.Client.List(ctx, &list, client.InNamespace(cj.Namespace)); err != nil {
		return nil, err
	}
	runs := map[int64][]*musterv1.FleetJob{}
	for i := range list.Items {
		fj := &list.Items[i]
		if owner := metav1.GetControllerOf(fj); owner == nil || owner.Name != cj.Name {
			continue
		}
		if at, err := time.Parse(time.RFC3339, fj.Annotations[musterv1.ScheduledTimeAnnotation]); err == nil {
			runs[at.Unix()] = append(runs[at.Unix()], fj)
		}
	}
	return runs, nil
}

// wantOneRunASlot waits until cj has a run for every slot from first to last, and checks
// that it has exactly one for each of them.
func wantOneRunASlot(t *testing.T, cj *musterv1.FleetCronJob, first, last time.Time) {
	t.Helper()
	if last.Before(first) {
		t.Fatalf("no slot of %s fell between %s and %s", cj.Name, first.Format(time.TimeOnly), last.Format(time.TimeOnly))
	}
	var runs map[int64][]*musterv1.FleetJob
	err := framework.Until(t.Context(), 30*time.Second, "a run of "+cj.Name+" for every slot", func(ctx context.Context) (bool, string, error) {
		var err error
		if runs, err = runsBySlot(ctx, cj); err != nil {
			return false, err.Error(), nil
		}
		for slot := first; !slot.After(last); slot = slot.Add(time.Minute) {
			if len(runs[slot.Unix()]) == 0 {
				return false, "no run for " + slot.Format(time.TimeOnly), nil
			}
		}
		return true, "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for slot := first; !slot.After(last); slot = slot.Add(time.Minute) {
		if n := len(runs[slot.Unix()]); n != 1 {
			t.Errorf("%s has %d runs for slot %s, want 1", cj.Name, n, slot.Format(time.TimeOnly))
		}
	}
	t.Logf("%s ran once in each slot from %s to %s", cj.Name, first.Format(time.TimeOnly), last.Format(time.TimeOnly))
}
