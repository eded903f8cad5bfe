package job

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
)

// replaceEarly creates the pods that take the place of pods that succeeded, while the
// round that records them still waits to share its status write with the changes to
// come. A slot a pod freed is then filled Quiet after the pod is seen to finish (so that a
// failure close behind still holds new pods back, as in one round), not only once a
// Job's changes pause or a Period passed; the pod writes are the same, the status writes
// still one per round. It does only what a round would do first, as the round decides it
// (decideRound; the built-in controller too creates before it writes the status):
// anything else — a failure, which may hold new pods back or end the Job, pods to delete,
// a Job that ends, is suspended or being deleted — is the round's.
//
// It reports whether the Job's last pod writes are not all seen yet, which holds new pods
// back until they are.
func (r *clusterReconciler) replaceEarly(ctx context.Context, req ctrl.Request) (unseen bool, err error) {
	job := &batchv1.Job{}
	if err := r.Client.Get(ctx, req.NamespacedName, job); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("reading the job: %w", err)
	}
	if !managedByAgent(job) || jobFinished(&job.Status) || job.DeletionTimestamp != nil || suspended(job) {
		return false, nil
	}
	pods, err := r.pods(ctx, job)
	if err != nil {
		return false, err
	}
	if !r.expectations.Satisfied(req.NamespacedName, pods) {
		return true, nil
	}
	toCreate, retry := replacements(job, pods, r.backoff.get(job.UID), r.fence(job), r.Clock.Now())
	if len(toCreate) == 0 {
		return false, nil
	}
	_, err = r.createPods(ctx, job, toCreate, retry)
	return false, err
}

// replacements are the pods the round would create for a running job whose pods only
// succeeded since its status was last written, and none when the round has more to do
// than create pods. The round's decision is decideRound's; the backoff it folds is not
// stored here, as the round folds the same pods again.
func replacements(job *batchv1.Job, pods []*corev1.Pod, backoff backoffRecord, f fence, now time.Time) ([]int, map[int]indexRetry) {
	p := decideRound(job, pods, backoff, f, now)
	if !p.onlyReplaces() {
		return nil, nil
	}
	return p.create, p.retry
}
