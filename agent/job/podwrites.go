package job

import (
	"context"
	"encoding/json"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/musterhq/muster/agent/podcontrol"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// pods lists the job's pods: those it controls that match its selector, and the orphans
// that match it, which it adopts as the built-in controller does (a Job recreated with
// the selector of one deleted with --cascade=orphan takes over its pods). Only pods the
// agent caches can be adopted: those that carry muster.dev/controller, as the pods of a
// Job the agent ran do.
func (r *clusterReconciler) pods(ctx context.Context, job *batchv1.Job) ([]*corev1.Pod, error) {
	selector, err := jobSelector(job)
	if err != nil {
		return nil, err
	}
	return r.podControl().List(ctx, job, selector, adopter{r: r, job: job})
}

// podControl writes the job's pods and records the writes in its expectations.
func (r *clusterReconciler) podControl() podcontrol.Control {
	return podcontrol.Control{Client: r.Client, Expectations: r.expectations, Kind: "Job"}
}

// jobSelector is the job's pod selector; a Job the API server stored always has one, and
// without it the pods are found by the label it would have generated.
func jobSelector(job *batchv1.Job) (labels.Selector, error) {
	if job.Spec.Selector == nil {
		return labels.SelectorFromSet(labels.Set{batchv1.ControllerUidLabel: string(job.UID)}), nil
	}
	selector, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("the job's selector: %w", err)
	}
	return selector, nil
}

// adopter takes over the orphans that match a running job's selector.
type adopter struct {
	r   *clusterReconciler
	job *batchv1.Job
}

func (a adopter) Adoptable(p *corev1.Pod) bool { return adoptable(a.job, p) }

func (a adopter) Adopt(ctx context.Context, p *corev1.Pod) (*corev1.Pod, error) {
	return a.r.adopt(ctx, a.job, p)
}

// adoptable: a pod matching the job's selector that no controller owns, while the job
// runs and the pod is not being deleted.
func adoptable(job *batchv1.Job, p *corev1.Pod) bool {
	return metav1.GetControllerOfNoCopy(p) == nil && p.DeletionTimestamp == nil &&
		job.DeletionTimestamp == nil && !jobFinished(&job.Status)
}

// adopt makes the job the pod's controller and puts the tracking finalizer on it, so that
// its finish is counted like its own pods'. The pod's UID in the patch makes it fail on a
// pod recreated under the same name. It returns the adopted pod, or nil when the pod went
// away or another controller took it first.
func (r *clusterReconciler) adopt(ctx context.Context, job *batchv1.Job, p *corev1.Pod) (*corev1.Pod, error) {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":             p.UID,
		"ownerReferences": []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
		"finalizers":      []string{trackingFinalizer},
	}})
	if err != nil {
		return nil, fmt.Errorf("adopting pod %s: %w", p.Name, err)
	}
	adopted := p.DeepCopy()
	if err := r.Client.Patch(ctx, adopted, client.RawPatch(types.StrategicMergePatchType, patch)); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) || apierrors.IsConflict(err) {
			// Gone, replaced, or another controller's by now (the API server refuses a
			// second controller): not ours.
			log.FromContext(ctx).V(1).Info("pod not adopted", "pod", p.Name, "reason", err.Error())
			return nil, nil
		}
		return nil, fmt.Errorf("adopting pod %s: %w", p.Name, err)
	}
	log.FromContext(ctx).Info("adopted an orphan pod", "pod", p.Name)
	return adopted, nil
}

// release removes the tracking finalizer from pods whose finish the status holds.
func (r *clusterReconciler) release(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod) error {
	return r.podControl().Release(ctx, job, pods, trackingFinalizer)
}

// deletePods deletes pods; with release, it removes their tracking finalizer first, so
// that they are not counted as failed.
func (r *clusterReconciler) deletePods(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod, release bool) (int32, error) {
	var releaseFirst string
	if release {
		releaseFirst = trackingFinalizer
	}
	deleted, err := r.podControl().Delete(ctx, job, pods, releaseFirst)
	if len(deleted) > 0 {
		r.Recorder.Eventf(job, nil, corev1.EventTypeNormal, musterv1.ReasonSuccessfulDelete, "Delete", "Deleted %d pods", len(deleted))
	}
	return int32(len(deleted)), err
}

// createPods creates the pods of indexes in slow-start batches: a template that cannot be
// created fails once, not once per pod. A pod the API server refused is not counted.
func (r *clusterReconciler) createPods(ctx context.Context, job *batchv1.Job, indexes []int, retry map[int]indexRetry) (int32, error) {
	pods := make([]*corev1.Pod, len(indexes))
	for k, i := range indexes {
		pods[k] = newPod(job, i, retry[i])
	}
	created, err := r.podControl().Create(ctx, job, pods)
	if err != nil {
		r.Recorder.Eventf(job, nil, corev1.EventTypeWarning, musterv1.ReasonFailedCreate, "Create", "%v", err)
	}
	if created > 0 {
		r.Recorder.Eventf(job, nil, corev1.EventTypeNormal, musterv1.ReasonSuccessfulCreate, "Create", "Created %d pods", created)
	}
	return created, err
}
