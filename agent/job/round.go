package job

import (
	"context"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/musterhq/muster/internal/patch"
)

// roundPlan is what one round of a Job decides from the Job, its pods and its recreation
// backoff, before it writes anything: the status to write, the pods to stop, create and
// release, and when to look again.
type roundPlan struct {
	// status is the status to write. Its active, ready and terminating counts are the
	// pods' as read; counted brings them in line with the pod writes made.
	status *batchv1.JobStatus
	// tally is what the Job's pods finished, the pods not recorded yet included.
	tally tally
	// backoff is the Job's recreation backoff with the pods that finished since folded in.
	backoff backoffRecord
	// end is the condition that ends the Job, or nil.
	end *batchv1.JobCondition
	// active are the pods that run; ready and terminating count the pods in those states.
	active             []*corev1.Pod
	ready, terminating int32
	// stop are the active pods to delete. When the Job ends that is all of them, counted
	// as the end says; otherwise they are removed by a scale-down or a suspension, which
	// are not failures: their tracking finalizer comes off first.
	stop []*corev1.Pod
	// create are the pods to create: indexes, or noIndex entries for a NonIndexed Job,
	// with the retries of indexes whose last pod failed.
	create []int
	retry  map[int]indexRetry
	// release are the pods whose finish the status records: their finalizer comes off
	// once it is stored.
	release []*corev1.Pod
	// suspension is the event that reports a change of the Suspended condition, if any.
	suspension *suspensionEvent
	// requeue is when time alone changes the decision: a backoff, the deadline or the
	// hub's fence ends.
	requeue time.Duration
}

// decideRound decides one round of a running Job: count the pods an earlier round recorded
// and released, record the pods that finished since, decide whether the Job ends, and plan
// the pods it needs. It is the whole decision of sync, and what the early replacement of
// succeeded pods creates (see replaceEarly).
func decideRound(job *batchv1.Job, pods []*corev1.Pod, backoff backoffRecord, f fence, now time.Time) roundPlan {
	status := job.Status.DeepCopy()
	if status.StartTime == nil && !suspended(job) {
		status.StartTime = &metav1.Time{Time: now}
	}
	settle(job, status, pods, nil)
	t := countFinished(job, status, pods)
	active := slices.DeleteFunc(slices.Clone(pods), func(p *corev1.Pod) bool { return !podActive(p) })
	retry, keep := retries(job, pods, t)
	p := roundPlan{
		status:  status,
		tally:   t,
		backoff: backoff.fold(t.newSucceeded, slices.Concat(t.newFailed, t.newIgnored)),
		end:     decideEnd(job, status, pods, t, int32(len(active)), f, now),
		active:  active,
		retry:   retry,
	}
	p.release = record(job, status, pods, t, p.end, keep)
	p.ready, p.terminating = readiness(pods)
	switch {
	case p.end != nil:
		p.stop = active
	case job.DeletionTimestamp == nil:
		p.stop, p.create, p.requeue = plan(job, t, active, pods, p.backoff, retry, now)
	}
	if p.end == nil {
		p.suspension = reportSuspension(job, status, now)
		reportUnschedulable(status, active, metav1.NewTime(now))
	} else if len(status.UncountedTerminatedPods.Succeeded)+len(status.UncountedTerminatedPods.Failed) == 0 &&
		len(p.release) == 0 && len(active) == 0 && p.terminating == 0 {
		// No pod runs or waits to be counted (stopping one would leave it terminating).
		finish(status, p.end, now)
	}
	if left, ok := deadlineLeft(job, status, now); ok && left > 0 {
		p.requeue = patch.Soonest(p.requeue, left)
	}
	if p.end == nil {
		p.requeue = patch.Soonest(p.requeue, f.left)
	}
	return p
}

// readiness counts the pods that are terminating, and the active ones that are ready.
func readiness(pods []*corev1.Pod) (ready, terminating int32) {
	for _, p := range pods {
		switch {
		case podTerminating(p):
			terminating++
		case podActive(p) && podReady(p):
			ready++
		}
	}
	return ready, terminating
}

// counted is the plan's status once deleted of its active pods are deleted and created
// pods created.
func (p *roundPlan) counted(deleted, created int32) *batchv1.JobStatus {
	p.status.Active = int32(len(p.active)) - deleted + created
	p.status.Terminating = ptr.To(p.terminating + deleted)
	p.status.Ready = ptr.To(min(p.ready, p.status.Active))
	return p.status
}

// onlyReplaces: the round's only work is to create the pods that replace pods that
// succeeded since the status was last written. Anything else — a failure, which may hold
// new pods back or end the Job, pods to delete, a Job that ends — is for the round itself.
func (p *roundPlan) onlyReplaces() bool {
	t := p.tally
	return len(t.newSucceeded) > 0 && len(t.newFailed)+len(t.newIgnored) == 0 && p.end == nil && len(p.stop) == 0
}

// sync runs one round: decide, then act — stop or start pods, write the status, and only
// once the status holds them release the pods it records (the next round counts them).
// One status write per round, like one round per batch of pod events.
func (r *clusterReconciler) sync(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod) (ctrl.Result, error) {
	p := decideRound(job, pods, r.backoff.get(job.UID), r.fence(job), r.Clock.Now())
	r.backoff.set(job.UID, p.backoff)

	var deleted, created int32
	var writeErr error
	if p.end != nil {
		deleted, writeErr = r.deletePods(ctx, job, p.stop, false)
	} else {
		// Pods removed by a scale-down or a suspension are not failures.
		deleted, writeErr = r.deletePods(ctx, job, p.stop, true)
		if writeErr == nil {
			created, writeErr = r.createPods(ctx, job, p.create, p.retry)
		}
	}
	if err := r.writeStatus(ctx, job, p.counted(deleted, created)); err != nil {
		return ctrl.Result{}, err
	}
	r.reportSuspension(job, p.suspension)
	if err := r.release(ctx, job, p.release); err != nil {
		return ctrl.Result{}, err
	}
	if jobFinished(&job.Status) {
		r.reportFinished(job)
		r.backoff.forget(job.UID)
		return r.afterFinish(ctx, job, nil)
	}
	return ctrl.Result{RequeueAfter: p.requeue}, writeErr
}

// plan decides which active pods to delete and which pods to create for a job that is not
// ending: indexes for an Indexed job, noIndex entries for a NonIndexed one. The time to
// requeue says when a backoff ends.
func plan(job *batchv1.Job, t tally, activePods, pods []*corev1.Pod, record backoffRecord, retry map[int]indexRetry, now time.Time) ([]*corev1.Pod, []int, time.Duration) {
	toDelete := surplus(job, t, activePods)
	doomed := map[types.UID]bool{}
	for _, p := range toDelete {
		doomed[p.UID] = true
	}
	var keep []*corev1.Pod
	for _, p := range activePods {
		if !doomed[p.UID] {
			keep = append(keep, p)
		}
	}
	want := wantActive(job, t, int32(len(keep)))
	if extra := int32(len(keep)) - want; extra > 0 {
		toDelete = append(toDelete, sortForDeletion(keep, false)[:extra]...)
		return capped(toDelete), nil, 0
	}
	missing := want - int32(len(keep))
	if onlyReplaceFailed(job) {
		for _, p := range pods {
			if podTerminating(p) {
				missing--
			}
		}
	}
	if missing <= 0 {
		return capped(toDelete), nil, 0
	}
	missing = min(missing, maxPodWritesPerRound)
	if !indexed(job) || job.Spec.BackoffLimitPerIndex == nil {
		if wait := record.remaining(now); wait > 0 {
			return capped(toDelete), nil, wait
		}
	}
	if !indexed(job) {
		create := make([]int, missing)
		for i := range create {
			create[i] = noIndex
		}
		return capped(toDelete), create, 0
	}
	var create []int
	var wait time.Duration
	// Indexes still in their backoff are skipped, so look that many further than missing.
	for _, i := range indexesToStart(job, t, keep, int(missing)+len(retry)) {
		if len(create) == int(missing) {
			break
		}
		if r, ok := retry[i]; ok && r.after.After(now) {
			if left := r.after.Sub(now); wait == 0 || left < wait {
				wait = left
			}
			continue
		}
		create = append(create, i)
	}
	return capped(toDelete), create, wait
}

func capped(pods []*corev1.Pod) []*corev1.Pod {
	return pods[:min(len(pods), maxPodWritesPerRound)]
}

// finish turns the interim condition into the final one, once no pod runs or waits to be
// counted: FailureTarget into Failed, SuccessCriteriaMet into Complete with its time. The
// API server refuses a finished Job without startTime, which a Job suspended before it
// ever ran, or since its pods finished, has none of: it gets the finish time.
func finish(status *batchv1.JobStatus, end *batchv1.JobCondition, now time.Time) {
	if status.StartTime == nil {
		status.StartTime = &metav1.Time{Time: now}
	}
	final := newCondition(batchv1.JobFailed, end.Reason, end.Message, now)
	if end.Type == batchv1.JobSuccessCriteriaMet {
		final = newCondition(batchv1.JobComplete, end.Reason, end.Message, now)
		status.CompletionTime = &metav1.Time{Time: now}
	}
	status.Conditions = append(status.Conditions, *final)
}
