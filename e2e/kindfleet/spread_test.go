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
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/hub/fleetjob"
)

// TestWorkloadSpreadPlacesSubsetsOnTheirMembers: subset a (member1) takes at most 2 of a
// FleetJob's 3 pods, subset b (member2) the rest; the pods run real containers there, as
// Jobs named after the FleetJob and their subsets, and the job completes.
func TestWorkloadSpreadPlacesSubsetsOnTheirMembers(t *testing.T) {
	muster(t)
	ctx := t.Context()
	member1, member2 := fleet.Members[0], fleet.Members[1]
	ws := &musterv1.WorkloadSpread{
		ObjectMeta: metav1.ObjectMeta{Name: "spread", Namespace: "default"},
		Spec: musterv1.WorkloadSpreadSpec{
			TargetReference: musterv1.TargetReference{APIVersion: "muster.dev/v1alpha1", Kind: "FleetJob", Name: "spread"},
			Subsets: []musterv1.WorkloadSpreadSubset{
				{Name: "a", ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{member1.Name}}, MaxReplicas: ptr.To(intstr.FromInt32(2))},
				{Name: "b", ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{member2.Name}}},
			},
		},
	}
	fj := &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: "spread", Namespace: "default"},
		Spec: musterv1.FleetJobSpec{Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			Parallelism: ptr.To[int32](3), Completions: ptr.To[int32](3),
			Template: workloadPod("sleep", "10s"),
		}}},
	}
	createOnHub(t, ws, fj)

	want := map[string]int{member1.Name + "/" + fleetjob.JobName(fj, "a"): 2, member2.Name + "/" + fleetjob.JobName(fj, "b"): 1}
	err := framework.Until(ctx, 2*time.Minute, fmt.Sprintf("pods running as %v", want), func(ctx context.Context) (bool, string, error) {
		got := map[string]int{}
		for _, m := range fleet.Members {
			var pods corev1.PodList
			if err := m.Client.List(ctx, &pods, client.InNamespace("default"), client.HasLabels{batchv1.JobNameLabel}); err != nil {
				return false, err.Error(), nil
			}
			for _, p := range pods.Items {
				if p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodSucceeded {
					got[m.Name+"/"+p.Labels[batchv1.JobNameLabel]]++
				}
			}
		}
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprint(got), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	waitComplete(t, fj, 2*time.Minute, nil)
}
