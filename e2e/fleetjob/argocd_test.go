//go:build e2e

package fleetjob

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/deploy/argocd"
	"github.com/musterhq/muster/e2e/framework"
)

// health is what Argo CD must show for an object: its status, and its message exactly,
// or only its start when prefix is set.
type health struct {
	status, message string
	prefix          bool
}

// expectHealth runs the object's Argo CD health check on its state in the hub (writing
// it to the capture directory as file, when one is set) and checks the verdict.
func expectHealth(t *testing.T, obj client.Object, file string, want health) {
	t.Helper()
	status, message, err := framework.ArgoCDHealth(t.Context(), fleet.Hub, obj, file)
	if err != nil {
		t.Fatal(err)
	}
	matches := message == want.message || (want.prefix && strings.HasPrefix(message, want.message))
	if status != want.status || !matches {
		t.Errorf("%T %s: Argo CD health %s %q, want %s %q", obj, obj.GetName(), status, message, want.status, want.message)
	}
}

func conditionMessage(conditions []metav1.Condition, condType string) string {
	if c := meta.FindStatusCondition(conditions, condType); c != nil {
		return c.Message
	}
	return "no " + condType + " condition"
}

// failing makes the pods fail after a second and the shard Job fail at the first.
func failing(fj *musterv1.FleetJob) {
	fj.Spec.Template.Spec.BackoffLimit = ptr.To[int32](0)
	fj.Spec.Template.Spec.Template.Labels["e2e.muster.dev/outcome"] = "Failed"
}

func suspended(fj *musterv1.FleetJob) {
	fj.Spec.Template.Spec.Suspend = ptr.To(true)
}

// TestArgoCDHealthOfRealObjects runs deploy/argocd's health checks on objects the hub and
// agents wrote, in each state a user meets: FleetJobs and BroadcastJobs running, complete,
// failed and suspended, the MemberClusters and a Work. The join suite checks an
// unreachable MemberCluster. With MUSTER_CAPTURE_ARGOCD_TESTDATA=dir every object is
// also written under dir, to refresh deploy/argocd/muster.dev/*/testdata.
func TestArgoCDHealthOfRealObjects(t *testing.T) {
	t.Parallel()
	t.Run("FleetJob", testFleetJobHealth)
	t.Run("BroadcastJob", testBroadcastJobHealth)
	t.Run("MemberCluster and Work", testMemberClusterAndWorkHealth)
}

func testFleetJobHealth(t *testing.T) {
	jobs := map[string]*musterv1.FleetJob{
		"running":   create(t, newFleetJob("argocd-running", musterv1.PlacementDuplicate, 1, 1, lasting(5*time.Minute))),
		"complete":  create(t, newFleetJob("argocd-complete", musterv1.PlacementDuplicate, 1, 1)),
		"failed":    create(t, newFleetJob("argocd-failed", musterv1.PlacementSingle, 1, 1, failing)),
		"suspended": create(t, newFleetJob("argocd-suspended", musterv1.PlacementSingle, 1, 1, suspended)),
	}
	phases := map[string]musterv1.JobPhase{"running": musterv1.JobRunning, "complete": musterv1.JobComplete, "failed": musterv1.JobFailed, "suspended": musterv1.JobSuspended}
	for state, fj := range jobs {
		got := waitForPhase(t, fj, phases[state], time.Minute)
		want := map[string]health{
			"running":   {status: argocd.Progressing, message: "Running: 0/2 completions, ", prefix: true},
			"complete":  {status: argocd.Healthy, message: conditionMessage(got.Status.Conditions, musterv1.FleetJobComplete)},
			"failed":    {status: argocd.Degraded, message: conditionMessage(got.Status.Conditions, musterv1.FleetJobFailed)},
			"suspended": {status: argocd.Suspended, message: "Every shard is suspended"},
		}[state]
		expectHealth(t, got, state, want)
	}
}

func newBroadcastJob(name string, mutate ...func(*musterv1.BroadcastJob)) *musterv1.BroadcastJob {
	j := &musterv1.BroadcastJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: musterv1.BroadcastJobSpec{
			Placement: &musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{member1.Name, member2.Name}}},
		},
	}
	fj := newFleetJob(name, musterv1.PlacementSingle, 1, 1)
	j.Spec.Template = fj.Spec.Template.Spec.Template
	for _, m := range mutate {
		m(j)
	}
	return j
}

func broadcastOutcome(outcome string, delay time.Duration) func(*musterv1.BroadcastJob) {
	return func(j *musterv1.BroadcastJob) {
		j.Spec.Template.Labels["e2e.muster.dev/outcome"] = outcome
		j.Spec.Template.Annotations = map[string]string{"e2e.muster.dev/delay": delay.String()}
	}
}

func testBroadcastJobHealth(t *testing.T) {
	jobs := map[string]*musterv1.BroadcastJob{
		"running":   newBroadcastJob("argocd-bcj-running", broadcastOutcome("Succeeded", 5*time.Minute)),
		"complete":  newBroadcastJob("argocd-bcj-complete"),
		"failed":    newBroadcastJob("argocd-bcj-failed", broadcastOutcome("Failed", time.Second)),
		"suspended": newBroadcastJob("argocd-bcj-suspended", func(j *musterv1.BroadcastJob) { j.Spec.Paused = true }),
	}
	phases := map[string]musterv1.BroadcastJobPhase{
		"running": musterv1.BroadcastJobRunning, "complete": musterv1.BroadcastJobCompleted,
		"failed": musterv1.BroadcastJobFailedPh, "suspended": musterv1.BroadcastJobPausedPh,
	}
	for _, j := range jobs {
		if err := fleet.Hub.Client.Create(t.Context(), j); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.Background(), j) })
	}
	for state, j := range jobs {
		got := waitForBroadcastPhase(t, j, phases[state])
		want := map[string]health{
			// Every work node of both members runs a pod that lasts for minutes.
			"running":   {status: argocd.Progressing, message: "0 of 8 pods succeeded, 8 active"},
			"complete":  {status: argocd.Healthy, message: conditionMessage(got.Status.Conditions, musterv1.BroadcastJobComplete)},
			"failed":    {status: argocd.Degraded, message: conditionMessage(got.Status.Conditions, musterv1.BroadcastJobFailed)},
			"suspended": {status: argocd.Suspended, message: conditionMessage(got.Status.Conditions, musterv1.BroadcastJobPaused)},
		}[state]
		expectHealth(t, got, state, want)
	}
}

func waitForBroadcastPhase(t *testing.T, j *musterv1.BroadcastJob, phase musterv1.BroadcastJobPhase) *musterv1.BroadcastJob {
	t.Helper()
	var got musterv1.BroadcastJob
	err := framework.Until(t.Context(), time.Minute, fmt.Sprintf("BroadcastJob %s to be %s", j.Name, phase), func(ctx context.Context) (bool, string, error) {
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(j), &got); err != nil {
			return false, err.Error(), nil
		}
		settled := got.Status.Phase == phase && got.Status.ObservedGeneration == got.Generation
		if phase == musterv1.BroadcastJobRunning {
			settled = settled && got.Status.Desired == 8 && got.Status.Active == 8
		}
		return settled, fmt.Sprintf("phase %s %+v", got.Status.Phase, got.Status.BroadcastCounts), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return &got
}

func testMemberClusterAndWorkHealth(t *testing.T) {
	for _, m := range fleet.Members {
		mc := &musterv1.MemberCluster{}
		if err := fleet.Hub.Client.Get(t.Context(), client.ObjectKey{Name: m.Name}, mc); err != nil {
			t.Fatal(err)
		}
		expectHealth(t, mc, "available", health{status: argocd.Healthy, message: "the agent renews its lease"})
	}

	fj := create(t, newFleetJob("argocd-work", musterv1.PlacementSingle, 1, 1))
	done := waitForPhase(t, fj, musterv1.JobComplete, time.Minute)
	var works musterv1.WorkList
	if err := fleet.Hub.Client.List(t.Context(), &works, client.MatchingLabels{musterv1.FleetJobUIDLabel: string(done.UID)}); err != nil {
		t.Fatal(err)
	}
	if len(works.Items) != 1 {
		t.Fatalf("%d Works carry FleetJob %s, want 1", len(works.Items), fj.Name)
	}
	w := &works.Items[0]
	expectHealth(t, w, "applied", health{status: argocd.Healthy, message: conditionMessage(w.Status.Conditions, musterv1.WorkAvailable)})
}
