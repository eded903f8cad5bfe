package job

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// afterFinish releases any pod a finished job still holds and deletes the job once its
// ttlSecondsAfterFinished passed.
func (r *clusterReconciler) afterFinish(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod) (ctrl.Result, error) {
	var held []*corev1.Pod
	for _, p := range pods {
		if hasFinalizer(p) {
			held = append(held, p)
		}
	}
	if err := r.release(ctx, job, held); err != nil {
		return ctrl.Result{}, err
	}
	ttl := job.Spec.TTLSecondsAfterFinished
	if ttl == nil {
		return ctrl.Result{}, nil
	}
	finished := job.Status.CompletionTime
	if c := findCondition(&job.Status, batchv1.JobFailed); c != nil {
		finished = &c.LastTransitionTime
	}
	if finished == nil {
		return ctrl.Result{}, nil
	}
	if left := finished.Add(time.Duration(*ttl) * time.Second).Sub(r.Clock.Now()); left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	if err := r.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &job.UID}); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("deleting the job after its TTL: %w", err)
	}
	log.FromContext(ctx).Info("deleted Job after ttlSecondsAfterFinished")
	return ctrl.Result{}, nil
}
