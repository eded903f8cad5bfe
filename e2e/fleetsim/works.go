package fleetsim

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bcj "github.com/musterhq/muster/api/broadcastjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/shards"
	"github.com/musterhq/muster/placement/nodefit"
)

// answer is what a member answered for one Work: the generation, and the timer that
// will report its Job complete.
type answer struct {
	generation int64
	done       *time.Timer
}

func (a answer) stop() {
	if a.done != nil {
		a.done.Stop()
	}
}

// StartAnswering answers the Works the hub gives the member until run ends or
// StopAnswering is called, as its agent would: each generation of a Work is reported
// applied and available, a Job's status fed back as running (or suspended), and
// JobDuration later as complete with every completion succeeded. Works of other kinds
// are reported applied only. writes bounds the status writes of the whole fleet in flight
// at once. The completions scheduled outlive a StopAnswering, as a member's Jobs run on
// while its agent restarts, and what was answered is remembered across it, as the
// agent's own Jobs tell it what it already fed back.
func (m *Member) StartAnswering(run context.Context, writes chan struct{}) {
	ctx, cancel := context.WithCancel(run)
	stopped := make(chan struct{})
	m.mu.Lock()
	m.stopAnswering, m.answering = cancel, stopped
	m.mu.Unlock()
	go func() {
		defer close(stopped)
		if m.answers == nil {
			m.answers = map[string]answer{}
		}
		for ctx.Err() == nil {
			if err := m.watchWorks(ctx, run, writes); err != nil && ctx.Err() == nil {
				time.Sleep(time.Second)
			}
		}
		if run.Err() != nil {
			for _, a := range m.answers {
				a.stop()
			}
		}
	}()
}

// StopAnswering stops answering Works, as an agent that died would, and returns once the
// member no longer watches them.
func (m *Member) StopAnswering() {
	m.mu.Lock()
	cancel, stopped := m.stopAnswering, m.answering
	m.mu.Unlock()
	if cancel != nil {
		cancel()
		<-stopped
	}
}

// watchWorks lists the member's Works, answers them, and answers what a watch from there
// brings until it ends. A Work the list no longer holds was deleted unseen: its answer is
// forgotten, so that one created again under its name is answered.
func (m *Member) watchWorks(ctx, run context.Context, writes chan struct{}) error {
	var works musterv1.WorkList
	ns := client.InNamespace(musterv1.MemberNamespace(m.Name))
	hub := m.hubClient()
	if err := hub.List(ctx, &works, ns); err != nil {
		return err
	}
	listed := map[string]bool{}
	for i := range works.Items {
		listed[works.Items[i].Name] = true
		m.answer(ctx, run, writes, &works.Items[i])
	}
	for name, a := range m.answers {
		if !listed[name] {
			a.stop()
			delete(m.answers, name)
		}
	}
	w, err := hub.Watch(ctx, &musterv1.WorkList{}, ns, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: works.ResourceVersion}})
	if err != nil {
		return err
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		work, ok := ev.Object.(*musterv1.Work)
		switch {
		case ev.Type == watch.Error:
			return fmt.Errorf("watching %s's Works: %v", m.Name, ev.Object)
		case !ok:
			continue
		case ev.Type == watch.Deleted:
			m.answers[work.Name].stop()
			delete(m.answers, work.Name)
		default:
			m.answer(ctx, run, writes, work)
		}
	}
	return nil
}

// answer reports a Work's generation applied, once, and schedules its Job's or
// BroadcastJob's completion (until run ends), in place of what an earlier generation
// scheduled.
func (m *Member) answer(ctx, run context.Context, writes chan struct{}, work *musterv1.Work) {
	prev, seen := m.answers[work.Name]
	if work.DeletionTimestamp != nil || (seen && prev.generation == work.Generation) {
		return
	}
	prev.stop()
	a := answer{generation: work.Generation}
	started := time.Now()
	var running, complete func() *feedback
	if job, _, err := shards.Decode[batchv1.Job, batchv1.JobStatus](work); err == nil && job.Kind == "Job" {
		running = func() *feedback { return jobFeedback(job, runningStatus(job, started)) }
		if !ptr.Deref(job.Spec.Suspend, false) {
			complete = func() *feedback { return jobFeedback(job, completeStatus(job, started, time.Now())) }
		}
	} else if bcj, _, err := shards.Decode[musterv1.BroadcastJob, musterv1.BroadcastJobStatus](work); err == nil && bcj.Kind == "BroadcastJob" {
		desired := m.Fitting(&bcj.Spec.Template.Spec)
		running = func() *feedback { return broadcastFeedback(bcj, desired, started, false) }
		if !bcj.Spec.Paused {
			complete = func() *feedback { return broadcastFeedback(bcj, desired, started, true) }
		}
	} else {
		running = func() *feedback { return nil }
	}
	m.writeStatus(ctx, writes, work, running())
	if complete != nil {
		answered := work.DeepCopy()
		a.done = time.AfterFunc(m.cfg.JobDuration, func() { m.writeStatus(run, writes, answered, complete()) })
	}
	m.answers[work.Name] = a
}

// feedback is the object a Work's manifest made in the member and its status, as the
// agent feeds them back.
type feedback struct {
	resource musterv1.ResourceIdentifier
	status   any
}

func jobFeedback(job *batchv1.Job, status *batchv1.JobStatus) *feedback {
	return &feedback{musterv1.ResourceIdentifier{Group: "batch", Version: "v1", Kind: "Job", Namespace: job.Namespace, Name: job.Name}, status}
}

// broadcastFeedback is a member BroadcastJob's status with a pod on each of the desired
// nodes: running, or all succeeded.
func broadcastFeedback(job *musterv1.BroadcastJob, desired int32, started time.Time, done bool) *feedback {
	status := musterv1.BroadcastJobStatus{ObservedGeneration: job.Generation, StartTime: &metav1.Time{Time: started}}
	status.Desired = desired
	bcj.SetCondition(&status, musterv1.BroadcastJobNodesEligible, metav1.ConditionTrue, musterv1.BroadcastJobReasonNodesEligible, "the simulated member's nodes that fit")
	if done {
		status.Succeeded = desired
		status.CompletionTime = &metav1.Time{Time: time.Now()}
		bcj.SetCondition(&status, musterv1.BroadcastJobComplete, metav1.ConditionTrue, musterv1.BroadcastJobReasonCompleted, "every eligible node ran its pod")
	} else {
		status.Active = desired
	}
	status.Phase = bcj.Phase(&status)
	gv := musterv1.GroupVersion
	return &feedback{musterv1.ResourceIdentifier{Group: gv.Group, Version: gv.Version, Kind: "BroadcastJob", Namespace: job.Namespace, Name: job.Name}, status}
}

// Fitting counts the member's nodes that could run pods of spec, with the node checks
// the agent's BroadcastJob controller makes.
func (m *Member) Fitting(spec *corev1.PodSpec) int32 {
	m.mu.Lock()
	nodes := m.nodes()
	m.mu.Unlock()
	template := nodefit.NewTemplate(spec)
	n := int32(0)
	for i := range nodes {
		if template.Check(&nodes[i]) == nodefit.Fits {
			n++
		}
	}
	return n
}

// writeStatus writes what the agent feeds back for work's generation: applied and
// available, with fed's object and status when set.
func (m *Member) writeStatus(ctx context.Context, writes chan struct{}, work *musterv1.Work, fed *feedback) {
	select {
	case writes <- struct{}{}:
	case <-ctx.Done():
		return
	}
	defer func() { <-writes }()
	now := metav1.Now()
	cond := func(t, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason, Message: msg, ObservedGeneration: work.Generation, LastTransitionTime: now}
	}
	manifest := musterv1.ManifestStatus{Ordinal: 0, Conditions: []metav1.Condition{
		cond(musterv1.WorkApplied, musterv1.ReasonApplied, "applied with server-side apply"),
		cond(musterv1.WorkAvailable, musterv1.WorkReasonObjectExists, "the object exists in the member"),
	}}
	if fed != nil {
		manifest.Resource = fed.resource
		if raw, err := json.Marshal(fed.status); err == nil {
			manifest.Status = &runtime.RawExtension{Raw: raw}
		}
	}
	patched := &musterv1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: work.Namespace, Name: work.Name}}
	patched.Status = musterv1.WorkStatus{ObservedGeneration: work.Generation, Manifests: []musterv1.ManifestStatus{manifest}}
	meta.SetStatusCondition(&patched.Status.Conditions, cond(musterv1.WorkApplied, musterv1.WorkReasonAllManifestsApplied, "every manifest is applied"))
	meta.SetStatusCondition(&patched.Status.Conditions, cond(musterv1.WorkAvailable, musterv1.WorkReasonAllObjectsAvailable, "every applied object exists"))
	raw, err := json.Marshal(map[string]any{"status": patched.Status})
	if err != nil {
		return
	}
	// A Work deleted meanwhile makes the write fail, and the next event sets it right, as
	// for an agent; any other failure is counted, for the bench to report.
	if err := m.hubClient().Status().Patch(ctx, patched, client.RawPatch(types.MergePatchType, raw)); err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		m.failures.Add(1)
	}
}

// runningStatus is a Job's status while its pods run, all of them at once, or while it
// is suspended.
func runningStatus(job *batchv1.Job, started time.Time) *batchv1.JobStatus {
	if ptr.Deref(job.Spec.Suspend, false) {
		return &batchv1.JobStatus{Conditions: []batchv1.JobCondition{{
			Type: batchv1.JobSuspended, Status: corev1.ConditionTrue, Reason: "JobSuspended", Message: "Job suspended", LastTransitionTime: metav1.NewTime(started),
		}}}
	}
	active := ptr.Deref(job.Spec.Parallelism, 1)
	return &batchv1.JobStatus{Active: active, Ready: ptr.To(active), StartTime: &metav1.Time{Time: started}}
}

// completeStatus is a Job's status once every completion succeeded.
func completeStatus(job *batchv1.Job, started, done time.Time) *batchv1.JobStatus {
	completions := ptr.Deref(job.Spec.Completions, 1)
	st := &batchv1.JobStatus{
		Succeeded: completions, Ready: ptr.To[int32](0),
		StartTime: &metav1.Time{Time: started}, CompletionTime: &metav1.Time{Time: done},
		Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonCompletionsReached, LastTransitionTime: metav1.NewTime(done)},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonCompletionsReached, LastTransitionTime: metav1.NewTime(done)},
		},
	}
	if ptr.Deref(job.Spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion && completions > 0 {
		st.CompletedIndexes = "0"
		if completions > 1 {
			st.CompletedIndexes = fmt.Sprintf("0-%d", completions-1)
		}
	}
	return st
}
