//go:build e2ekind

package kindfleet

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

// members is the placement of every job here: both member clusters.
func members() musterv1.Placement {
	return musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{fleet.Members[0].Name, fleet.Members[1].Name}}}
}

// workloadPod is a pod template running the workload image with args.
func workloadPod(args ...string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{{Name: "work", Image: workload, ImagePullPolicy: corev1.PullNever, Args: args}},
	}}
}

// dividedJob is a FleetJob divided over both members whose pods run the workload with args.
func dividedJob(name string, completions, parallelism int32, args ...string) *musterv1.FleetJob {
	return &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: musterv1.FleetJobSpec{
			Placement: musterv1.FleetJobPlacement{Mode: musterv1.PlacementDivided, Placement: members()},
			Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Completions: ptr.To(completions), Parallelism: ptr.To(parallelism),
				Template: workloadPod(args...),
			}},
		},
	}
}

func indexed(fj *musterv1.FleetJob) *musterv1.FleetJob {
	fj.Spec.Template.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	return fj
}

// createOnHub creates objects on the hub and deletes them when the test ends.
func createOnHub(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := fleet.Hub.Client.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.Background(), o) })
	}
}

// waitComplete waits until the FleetJob is Complete, failing at once if it Fails; check,
// when given, runs on every poll and stops the wait with its error.
func waitComplete(t *testing.T, fj *musterv1.FleetJob, timeout time.Duration, check func(context.Context) error) {
	t.Helper()
	err := framework.Until(t.Context(), timeout, "FleetJob "+fj.Name+" to complete", func(ctx context.Context) (bool, string, error) {
		if check != nil {
			if err := check(ctx); err != nil {
				return false, "", err
			}
		}
		var got musterv1.FleetJob
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(fj), &got); err != nil {
			return false, err.Error(), nil
		}
		if got.Status.Phase == musterv1.JobFailed {
			return false, "", fmt.Errorf("FleetJob %s failed: %v", fj.Name, got.Status.Conditions)
		}
		return got.Status.Phase == musterv1.JobComplete, fmt.Sprintf("%s %v", got.Status.Phase, got.Status.Clusters), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
