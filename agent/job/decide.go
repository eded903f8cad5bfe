package job

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/musterhq/muster/api/indexset"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// maxPodWritesPerRound bounds creations and deletions in one reconcile, as upstream does,
// so one large job does not starve the others.
const maxPodWritesPerRound = 500

// maxDeadlineSeconds is the longest activeDeadlineSeconds a time.Duration can hold.
const maxDeadlineSeconds = int64(math.MaxInt64 / time.Second)

// Condition reasons the API defines for the interim and final conditions, and the one
// upstream uses when completions are reached.
const (
	reasonCompletionsReached = batchv1.JobReasonCompletionsReached
	reasonSuccessPolicy      = batchv1.JobReasonSuccessPolicy
	reasonBackoffLimit       = batchv1.JobReasonBackoffLimitExceeded
	reasonDeadline           = batchv1.JobReasonDeadlineExceeded
	reasonPodFailurePolicy   = batchv1.JobReasonPodFailurePolicy
	reasonMaxFailedIndexes   = batchv1.JobReasonMaxFailedIndexesExceeded
	reasonFailedIndexes      = batchv1.JobReasonFailedIndexes
)

func findCondition(status *batchv1.JobStatus, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == t && status.Conditions[i].Status == corev1.ConditionTrue {
			return &status.Conditions[i]
		}
	}
	return nil
}

// jobFinished: Complete or Failed is True.
func jobFinished(status *batchv1.JobStatus) bool {
	return findCondition(status, batchv1.JobComplete) != nil || findCondition(status, batchv1.JobFailed) != nil
}

// finishing returns the interim condition (FailureTarget or SuccessCriteriaMet) a job
// already has: the decision to end it, kept across rounds until its pods are gone.
func finishing(status *batchv1.JobStatus) *batchv1.JobCondition {
	if c := findCondition(status, batchv1.JobSuccessCriteriaMet); c != nil {
		return c
	}
	return findCondition(status, batchv1.JobFailureTarget)
}

func newCondition(t batchv1.JobConditionType, reason, message string, now time.Time) *batchv1.JobCondition {
	ts := metav1.NewTime(now)
	return &batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastProbeTime: ts, LastTransitionTime: ts}
}

func suspended(job *batchv1.Job) bool { return ptr.Deref(job.Spec.Suspend, false) }

// backoffLimit is the job's limit on failures in total. An explicit backoffLimit holds
// with backoffLimitPerIndex too; only an unset one means no limit there (the API server
// defaults it so, but a Job read from elsewhere may not be defaulted).
func backoffLimit(job *batchv1.Job) int32 {
	if l := job.Spec.BackoffLimit; l != nil {
		return *l
	}
	if job.Spec.BackoffLimitPerIndex != nil {
		return math.MaxInt32
	}
	return 6
}

// tally is what the job has finished, counting pods whose finish is not recorded yet.
type tally struct {
	succeeded, failed int32
	// succeededIndexes and failedIndexes, for Indexed jobs.
	succeededIndexes, failedIndexes indexset.Set
	// newSucceeded and newFailed are finished pods not recorded in status yet; failJob is
	// the message of a pod failure policy FailJob rule one of them matched.
	newSucceeded, newFailed []*corev1.Pod
	failJob                 string
	// newIgnored are failed pods a pod failure policy Ignore rule matched: they count for
	// nothing but still hold back their replacement by the recreation backoff.
	newIgnored []*corev1.Pod
}

// countFinished adds the pods that finished since the status was written to its counts.
// A pod counts once: while it carries the tracking finalizer and its UID is not yet in
// uncountedTerminatedPods. Failures a pod failure policy ignores do not count.
func countFinished(job *batchv1.Job, status *batchv1.JobStatus, pods []*corev1.Pod) tally {
	uncounted := status.UncountedTerminatedPods
	recorded := map[types.UID]bool{}
	if uncounted != nil {
		for _, uid := range uncounted.Succeeded {
			recorded[uid] = true
		}
		for _, uid := range uncounted.Failed {
			recorded[uid] = true
		}
	}
	t := tally{succeeded: status.Succeeded, failed: status.Failed}
	if uncounted != nil {
		t.succeeded += int32(len(uncounted.Succeeded))
		t.failed += int32(len(uncounted.Failed))
	}
	completions := int(ptr.Deref(job.Spec.Completions, 0))
	if indexed(job) {
		t.succeededIndexes = indexset.Parse(status.CompletedIndexes, completions)
		t.failedIndexes = indexset.Parse(ptr.Deref(status.FailedIndexes, ""), completions)
	}
	for _, pod := range pods {
		if !hasFinalizer(pod) || recorded[pod.UID] {
			continue
		}
		idx := podIndex(pod)
		validIndex := !indexed(job) || (idx != noIndex && idx < completions)
		switch {
		case pod.Status.Phase == corev1.PodSucceeded:
			if !validIndex {
				continue
			}
			t.newSucceeded = append(t.newSucceeded, pod)
			if indexed(job) {
				if !t.failedIndexes.Has(idx) {
					t.succeededIndexes.Add(idx)
				}
			} else {
				t.succeeded++
			}
		case podFailed(job, pod):
			if !validIndex {
				continue
			}
			action, msg := failurePolicyAction(job, pod)
			if action != nil && *action == batchv1.PodFailurePolicyActionIgnore {
				t.newIgnored = append(t.newIgnored, pod)
				continue
			}
			t.newFailed = append(t.newFailed, pod)
			t.failed++
			if action != nil && *action == batchv1.PodFailurePolicyActionFailJob && t.failJob == "" {
				t.failJob = msg
			}
			if indexed(job) && job.Spec.BackoffLimitPerIndex != nil && !t.succeededIndexes.Has(idx) {
				failFast := action != nil && *action == batchv1.PodFailurePolicyActionFailIndex
				if failFast || annotationInt(pod, indexFailureAnnotation)+1 > *job.Spec.BackoffLimitPerIndex {
					t.failedIndexes.Add(idx)
				}
			}
		}
	}
	if indexed(job) {
		t.succeeded = int32(t.succeededIndexes.Len())
	}
	return t
}

// decideEnd returns the condition that ends the job this round, or nil. The order is
// upstream's: an earlier decision stands; then pod failure policy, backoff limits and
// the deadline; then per-index limits; then the success policy and completions; then,
// Muster's own, the hub's fence f.
func decideEnd(job *batchv1.Job, status *batchv1.JobStatus, pods []*corev1.Pod, t tally, active int32, f fence, now time.Time) *batchv1.JobCondition {
	if c := finishing(status); c != nil {
		return c
	}
	if t.failJob != "" {
		return newCondition(batchv1.JobFailureTarget, reasonPodFailurePolicy, t.failJob, now)
	}
	if t.failed > backoffLimit(job) || pastBackoffLimitOnFailure(job, pods) {
		return newCondition(batchv1.JobFailureTarget, reasonBackoffLimit, "Job has reached the specified backoff limit", now)
	}
	if left, ok := deadlineLeft(job, status, now); ok && left <= 0 {
		return newCondition(batchv1.JobFailureTarget, reasonDeadline, "Job was active longer than specified deadline", now)
	}
	if indexed(job) && job.Spec.BackoffLimitPerIndex != nil {
		completions := int(ptr.Deref(job.Spec.Completions, 0))
		if m := job.Spec.MaxFailedIndexes; m != nil && t.failedIndexes.Len() > int(*m) {
			return newCondition(batchv1.JobFailureTarget, reasonMaxFailedIndexes, "Job has exceeded the specified maximal number of failed indexes", now)
		}
		if failed := t.failedIndexes.Len(); failed > 0 && failed+t.succeededIndexes.Len() >= completions {
			return newCondition(batchv1.JobFailureTarget, reasonFailedIndexes, "Job has failed indexes", now)
		}
	}
	if indexed(job) {
		if msg, ok := successPolicyMet(job, t.succeededIndexes); ok {
			return newCondition(batchv1.JobSuccessCriteriaMet, reasonSuccessPolicy, msg, now)
		}
	}
	var complete bool
	if c := job.Spec.Completions; c == nil {
		// Without completions, the first success ends the job once no pod runs.
		complete = t.succeeded > 0 && active == 0
	} else {
		complete = t.succeeded >= *c && active == 0
	}
	if complete {
		return newCondition(batchv1.JobSuccessCriteriaMet, reasonCompletionsReached, "Reached expected number of succeeded pods", now)
	}
	if f.message != "" {
		// Last: what the pods already did decides first, and a fence does not undo it.
		return newCondition(batchv1.JobFailureTarget, musterv1.JobReasonFenced, f.message, now)
	}
	return nil
}

// pastBackoffLimitOnFailure: with restartPolicy OnFailure failures restart containers
// rather than fail pods, so the restarts of running pods count against backoffLimit.
func pastBackoffLimitOnFailure(job *batchv1.Job, pods []*corev1.Pod) bool {
	if job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		return false
	}
	var restarts int32
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodPending {
			restarts += containerRestarts(p)
		}
	}
	if limit := backoffLimit(job); limit > 0 {
		return restarts >= limit
	}
	return restarts > 0
}

// deadlineLeft is how long the job may still run under activeDeadlineSeconds.
func deadlineLeft(job *batchv1.Job, status *batchv1.JobStatus, now time.Time) (time.Duration, bool) {
	d := job.Spec.ActiveDeadlineSeconds
	if d == nil || status.StartTime == nil || suspended(job) || *d > maxDeadlineSeconds {
		// A deadline beyond what a Duration holds is never reached; converting it would
		// overflow into the past and fail the job at once.
		return 0, false
	}
	return status.StartTime.Add(time.Duration(*d) * time.Second).Sub(now), true
}

// releasable reports whether the pod's finalizer may come off this round: it finished (or
// the job ends), and, for backoffLimitPerIndex, it is not the failed pod its index still
// needs to remember its failure count before the replacement exists.
func releasable(job *batchv1.Job, pod *corev1.Pod, end *batchv1.JobCondition, keep map[types.UID]bool) bool {
	if !hasFinalizer(pod) {
		return false
	}
	if end != nil || job.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded {
		return true
	}
	return podFailed(job, pod) && !keep[pod.UID]
}

// record writes this round's finished pods into the status before their finalizers come
// off, so no finish is lost or counted twice: succeeded and failed UIDs into
// uncountedTerminatedPods (for Indexed jobs, succeeded indexes straight into
// completedIndexes), failed indexes, and the decision to end the job. It returns the
// pods whose finalizer may be removed once that status is stored.
func record(job *batchv1.Job, status *batchv1.JobStatus, pods []*corev1.Pod, t tally, end *batchv1.JobCondition, keep map[types.UID]bool) []*corev1.Pod {
	if status.UncountedTerminatedPods == nil {
		status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	u := status.UncountedTerminatedPods
	newSucceeded := map[types.UID]bool{}
	for _, p := range t.newSucceeded {
		newSucceeded[p.UID] = true
	}
	newFailed := map[types.UID]bool{}
	for _, p := range t.newFailed {
		newFailed[p.UID] = true
	}
	var release []*corev1.Pod
	for _, pod := range pods {
		if len(release) == maxPodWritesPerRound {
			// As upstream, a round records a bounded number of finished pods, which keeps
			// uncountedTerminatedPods and the finalizer patches of one round small; the
			// pods left over still hold their finalizer and are recorded next round.
			break
		}
		if !releasable(job, pod, end, keep) {
			continue
		}
		switch {
		case newSucceeded[pod.UID] && !indexed(job):
			u.Succeeded = append(u.Succeeded, pod.UID)
		case newFailed[pod.UID]:
			u.Failed = append(u.Failed, pod.UID)
		case end != nil && end.Type == batchv1.JobFailureTarget && (podActive(pod) || podTerminating(pod)) && !slices.Contains(u.Failed, pod.UID):
			// Pods stopped because the job failed count as failed; pods stopped because it
			// succeeded count as nothing.
			u.Failed = append(u.Failed, pod.UID)
		}
		release = append(release, pod)
	}
	if indexed(job) {
		status.CompletedIndexes = t.succeededIndexes.String()
		status.Succeeded = int32(t.succeededIndexes.Len())
		if job.Spec.BackoffLimitPerIndex != nil {
			status.FailedIndexes = ptr.To(t.failedIndexes.String())
		}
	}
	if end != nil && finishing(status) == nil {
		status.Conditions = append(status.Conditions, *end)
	}
	return release
}

// settle moves uncounted pods whose finalizer is gone (released now or before, or the pod
// itself is gone) into the counters.
func settle(job *batchv1.Job, status *batchv1.JobStatus, pods []*corev1.Pod, released map[types.UID]bool) {
	u := status.UncountedTerminatedPods
	if u == nil {
		return
	}
	holding := map[types.UID]bool{}
	for _, p := range pods {
		if hasFinalizer(p) && !released[p.UID] {
			holding[p.UID] = true
		}
	}
	keep := func(uids []types.UID, counter *int32) []types.UID {
		var left []types.UID
		for _, uid := range uids {
			if holding[uid] {
				left = append(left, uid)
				continue
			}
			*counter++
		}
		return left
	}
	var ignored int32
	counter := &status.Succeeded
	if indexed(job) {
		// Indexed successes are counted through completedIndexes.
		counter = &ignored
	}
	u.Succeeded = keep(u.Succeeded, counter)
	u.Failed = keep(u.Failed, &status.Failed)
}

// toCreate is how many pods a NonIndexed job should add, or which indexes an Indexed one
// should start, given its active pods.
func wantActive(job *batchv1.Job, t tally, active int32) int32 {
	if suspended(job) {
		return 0
	}
	parallelism := ptr.Deref(job.Spec.Parallelism, 1)
	if job.Spec.Completions == nil {
		// Once a pod succeeded, no new ones; the running ones finish.
		if t.succeeded > 0 {
			return min(active, parallelism)
		}
		return parallelism
	}
	remaining := *job.Spec.Completions - t.succeeded
	if indexed(job) {
		remaining -= int32(t.failedIndexes.Len())
	}
	return max(min(parallelism, remaining), 0)
}

// indexesToStart lists the n lowest indexes that are neither done, failed nor running. It
// jumps over runs of finished indexes, so its work follows n, the running pods and the gaps
// between finished indexes, not the job's completions.
func indexesToStart(job *batchv1.Job, t tally, activePods []*corev1.Pod, n int) []int {
	running := make(map[int]bool, len(activePods))
	for _, p := range activePods {
		running[podIndex(p)] = true
	}
	completions := int(ptr.Deref(job.Spec.Completions, 0))
	out := make([]int, 0, min(n, completions))
	for i := 0; i < completions && len(out) < n; {
		next := t.failedIndexes.NextAbsent(t.succeededIndexes.NextAbsent(i))
		if next != i {
			i = next
			continue
		}
		if !running[i] {
			out = append(out, i)
		}
		i++
	}
	return out
}

// surplus picks active pods to delete for an Indexed job: pods of an index that is done,
// failed, out of range, or that another active pod already runs.
func surplus(job *batchv1.Job, t tally, activePods []*corev1.Pod) []*corev1.Pod {
	if !indexed(job) {
		return nil
	}
	completions := int(ptr.Deref(job.Spec.Completions, 0))
	seen := map[int]bool{}
	var out []*corev1.Pod
	for _, p := range sortForDeletion(activePods, true) {
		i := podIndex(p)
		if i == noIndex || i >= completions || t.succeededIndexes.Has(i) || t.failedIndexes.Has(i) || seen[i] {
			out = append(out, p)
			continue
		}
		seen[i] = true
	}
	return out
}

// sortForDeletion orders active pods the way the built-in controller prefers to remove
// them: unscheduled before scheduled, pending before running, not ready before ready,
// newer before older. oldestFirst orders by age alone, so that among pods of one index
// the oldest is kept.
func sortForDeletion(pods []*corev1.Pod, oldestFirst bool) []*corev1.Pod {
	out := slices.Clone(pods)
	rank := func(p *corev1.Pod) int {
		switch {
		case p.Spec.NodeName == "":
			return 0
		case p.Status.Phase == corev1.PodPending:
			return 1
		case !podReady(p):
			return 2
		}
		return 3
	}
	slices.SortStableFunc(out, func(a, b *corev1.Pod) int {
		if oldestFirst {
			return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Name, b.Name))
		}
		return cmp.Or(cmp.Compare(rank(a), rank(b)), b.CreationTimestamp.Compare(a.CreationTimestamp.Time), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// indexRetry is an index whose last pod failed within backoffLimitPerIndex: its next pod
// carries failures, and may start once the index's backoff has passed.
type indexRetry struct {
	failures, ignored int32
	after             time.Time
}

// retries finds, for jobs with backoffLimitPerIndex, the indexes waiting for a new pod
// after a failure, and the failed pods whose finalizer stays until that pod exists, so
// that the index's failure count is not lost with them.
func retries(job *batchv1.Job, pods []*corev1.Pod, t tally) (map[int]indexRetry, map[types.UID]bool) {
	out, keep := map[int]indexRetry{}, map[types.UID]bool{}
	if !indexed(job) || job.Spec.BackoffLimitPerIndex == nil {
		return out, keep
	}
	newest := map[int]*corev1.Pod{}
	running := map[int]bool{}
	for _, p := range pods {
		i := podIndex(p)
		switch {
		case i == noIndex:
		case podActive(p):
			running[i] = true
		case podFailed(job, p) && (newest[i] == nil || p.CreationTimestamp.After(newest[i].CreationTimestamp.Time)):
			newest[i] = p
		}
	}
	for i, p := range newest {
		if running[i] || t.failedIndexes.Has(i) || t.succeededIndexes.Has(i) {
			continue
		}
		r := indexRetry{failures: annotationInt(p, indexFailureAnnotation), ignored: annotationInt(p, indexIgnoredAnnotation)}
		if action, _ := failurePolicyAction(job, p); action != nil && *action == batchv1.PodFailurePolicyActionIgnore {
			r.ignored++
		} else {
			r.failures++
		}
		// Ignored failures do not count against the limit, but do lengthen the wait.
		r.after = finishedAt(p).Add(backoffDelay(r.failures + r.ignored))
		out[i] = r
		if hasFinalizer(p) {
			keep[p.UID] = true
		}
	}
	return out, keep
}

func describe(c *batchv1.JobCondition) string {
	return fmt.Sprintf("%s (%s)", c.Type, c.Reason)
}
