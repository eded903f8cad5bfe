// Package broadcastjob holds the writes both BroadcastJob controllers, the hub's and the
// agent's, make to a job, with the events that announce them; what the job's status
// means stays in api/broadcastjob.
package broadcastjob

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bcj "github.com/musterhq/muster/api/broadcastjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/patch"
)

// Writer makes the writes both BroadcastJob controllers make to a job, with their events.
type Writer struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Writes, when set, records each status write, which is then made without the
	// optimistic lock (see package patch): for a controller that is the status' one writer
	// and checks Writes before it decides. Without it status is written under the lock.
	Writes *patch.Writes
	// Refusals, when set, paces the job's writes after the API server refused one as
	// invalid (see patch.Refusals).
	Refusals *patch.Refusals
}

// PauseOnFailure sets spec.paused and records how many failed pods it paused on, in one
// write guarded by the resourceVersion; scope says where the pause applies, for the event.
func (w Writer) PauseOnFailure(ctx context.Context, job *musterv1.BroadcastJob, failed int32, scope string) error {
	h := patch.NewHelper(w.Client, job, patch.Paced(w.Refusals, w.Recorder))
	job.Spec.Paused = true
	if job.Annotations == nil {
		job.Annotations = map[string]string{}
	}
	job.Annotations[musterv1.PausedAtFailuresAnnotation] = strconv.Itoa(int(failed))
	if err := h.Patch(ctx, job); err != nil {
		return fmt.Errorf("pausing after a failed pod: %w", err)
	}
	w.Recorder.Eventf(job, nil, corev1.EventTypeWarning, musterv1.BroadcastJobReasonPausedOnFailure, "Pause", "paused %s after %d failed pods (failurePolicy Pause)", scope, failed)
	return nil
}

// UpdateStatus writes status when it changed, and records the job's transitions as events
// once the write succeeded.
func (w Writer) UpdateStatus(ctx context.Context, job *musterv1.BroadcastJob, status musterv1.BroadcastJobStatus) error {
	before := job.Status.DeepCopy()
	h := patch.NewHelper(w.Client, job, w.statusOption(), patch.Paced(w.Refusals, w.Recorder))
	job.Status = status
	if err := h.Patch(ctx, job); err != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	for _, e := range bcj.Transitions(before, &status) {
		w.Recorder.Eventf(job, nil, e.EventType, e.Reason, e.Condition, "%s", e.Message)
	}
	return nil
}

func (w Writer) statusOption() patch.Option {
	if w.Writes != nil {
		return patch.Tracked(w.Writes)
	}
	return patch.SharedStatus()
}
