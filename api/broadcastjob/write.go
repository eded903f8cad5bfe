package broadcastjob

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Writer makes the writes both BroadcastJob controllers make to a job, with their events.
type Writer struct {
	Client   client.Client
	Recorder events.EventRecorder
}

// PauseOnFailure sets spec.paused and records how many failed pods it paused on, in one
// write guarded by the resourceVersion; scope says where the pause applies, for the event.
func (w Writer) PauseOnFailure(ctx context.Context, job *musterv1.BroadcastJob, failed int32, scope string) error {
	patch := client.MergeFromWithOptions(job.DeepCopy(), client.MergeFromWithOptimisticLock{})
	job.Spec.Paused = true
	if job.Annotations == nil {
		job.Annotations = map[string]string{}
	}
	job.Annotations[musterv1.PausedAtFailuresAnnotation] = strconv.Itoa(int(failed))
	if err := w.Client.Patch(ctx, job, patch); err != nil {
		return fmt.Errorf("pausing after a failed pod: %w", err)
	}
	w.Recorder.Eventf(job, nil, corev1.EventTypeWarning, musterv1.BroadcastJobReasonPausedOnFailure, "Pause", "paused %s after %d failed pods (failurePolicy Pause)", scope, failed)
	return nil
}

// UpdateStatus writes status when it changed, and records the job's transitions as events.
func (w Writer) UpdateStatus(ctx context.Context, job *musterv1.BroadcastJob, status musterv1.BroadcastJobStatus) error {
	if equality.Semantic.DeepEqual(job.Status, status) {
		return nil
	}
	before := job.Status.DeepCopy()
	job.Status = status
	if err := w.Client.Status().Update(ctx, job); err != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	for _, e := range Transitions(before, &status) {
		w.Recorder.Eventf(job, nil, e.EventType, e.Reason, e.Condition, "%s", e.Message)
	}
	return nil
}
