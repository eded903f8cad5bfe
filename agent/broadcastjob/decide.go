package broadcastjob

import (
	"fmt"
	"math"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bcj "github.com/musterhq/muster/api/broadcastjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/placement/nodefit"
	"github.com/musterhq/muster/placement/parallelism"
)

// maxDeadlineSeconds is the longest activeDeadlineSeconds a time.Duration can hold.
const maxDeadlineSeconds = int64(math.MaxInt64 / time.Second)

// observed is what one reconcile sees.
type observed struct {
	job   *musterv1.BroadcastJob
	nodes []*corev1.Node
	pods  []*corev1.Pod
	now   time.Time
}

// plan is what one reconcile does. Decide computes it without side effects.
type plan struct {
	// pause sets spec.paused (failurePolicy Pause) and records the failures it paused on;
	// nothing else happens in that round.
	pause bool
	// restartsExceeded are running pods past the restart limit, to be stopped as failed.
	restartsExceeded []*corev1.Pod
	// stop are active pods to delete.
	stop []*corev1.Pod
	// held are active pods on nodes that are gone or no longer keep them, which a paused
	// job leaves alone until it resumes.
	held []*corev1.Pod
	// create lists nodes that get a pod now, in order.
	create []string
	// status is the job's new status, before the creations are counted.
	status musterv1.BroadcastJobStatus
	// requeueAfter is when time alone changes the decision (a deadline).
	requeueAfter time.Duration
}

// podOutcome classifies one pod.
type podOutcome int

const (
	podActive podOutcome = iota
	podSucceeded
	podFailed
)

func outcome(pod *corev1.Pod, restartLimit int32) (podOutcome, bool) {
	switch {
	case pod.Status.Phase == corev1.PodSucceeded:
		return podSucceeded, false
	case pod.Status.Phase == corev1.PodFailed:
		return podFailed, false
	case pod.Annotations[musterv1.RestartLimitExceededAnnotation] != "":
		return podFailed, false
	case pod.Spec.RestartPolicy == corev1.RestartPolicyOnFailure && restarts(pod) > restartLimit:
		return podFailed, true
	}
	return podActive, false
}

func restarts(pod *corev1.Pod) int32 {
	var n int32
	for _, s := range pod.Status.ContainerStatuses {
		n += s.RestartCount
	}
	return n
}

// PodNode is the node a job pod is bound to.
func PodNode(pod *corev1.Pod) string {
	if n := pod.Annotations[musterv1.NodeAnnotation]; n != "" {
		return n
	}
	return pod.Spec.NodeName
}

// decide computes a reconcile's plan for a job that has not finished.
func decide(o observed) plan {
	job := o.job
	var p plan
	status := *job.Status.DeepCopy()
	status.ObservedGeneration = job.Generation
	status.Clusters = nil
	if status.StartTime == nil {
		status.StartTime = &metav1.Time{Time: o.now}
	}

	fit := nodefit.NewTemplate(&job.Spec.Template.Spec)
	nodes := make(map[string]*corev1.Node, len(o.nodes))
	for _, n := range o.nodes {
		nodes[n.Name] = n
	}
	counts := musterv1.BroadcastCounts{}
	var active, misplaced []*corev1.Pod
	var firstFailed *corev1.Pod
	withPod := make(map[string]bool, len(o.pods))
	for _, pod := range o.pods {
		name := PodNode(pod)
		withPod[name] = true
		result, exceeded := outcome(pod, job.Spec.FailurePolicy.RestartLimit)
		switch result {
		case podSucceeded:
			counts.Succeeded++
		case podFailed:
			counts.Failed++
			if firstFailed == nil || pod.Name < firstFailed.Name {
				firstFailed = pod
			}
			if exceeded {
				p.restartsExceeded = append(p.restartsExceeded, pod)
			}
		case podActive:
			counts.Active++
			if pod.DeletionTimestamp != nil {
				continue
			}
			active = append(active, pod)
			if node, ok := nodes[name]; !ok || !fit.Keeps(node) {
				misplaced = append(misplaced, pod)
			}
		}
	}
	// desired counts the nodes that exist and are eligible, as upstream does: those
	// that keep the job's pod and those that fit one still to come. A pod whose node is
	// gone or no longer keeps it counts as active, succeeded or failed, but not as a
	// node the job wants.
	var eligible int32
	var missing []string
	unfit := map[nodefit.Reason]int{}
	for _, n := range o.nodes {
		if withPod[n.Name] {
			if fit.Keeps(n) {
				eligible++
			}
			continue
		}
		if reason := fit.Check(n); reason != nodefit.Fits {
			unfit[reason]++
			continue
		}
		missing = append(missing, n.Name)
	}
	slices.Sort(missing)
	counts.Desired = eligible + int32(len(missing))
	status.BroadcastCounts = counts
	status.Parallelism = parallelism.Resolve(job.Spec.Parallelism, counts.Desired)

	finish := func(condition, reason, message string, stopActive bool) plan {
		if stopActive {
			// The job's status is final from here: the pods being stopped no longer count.
			p.stop = active
			status.Active = 0
		}
		p.create = nil
		status.CompletionTime = &metav1.Time{Time: o.now}
		bcj.SetCondition(&status, condition, metav1.ConditionTrue, reason, message)
		bcj.SetCondition(&status, musterv1.BroadcastJobPaused, metav1.ConditionFalse, reason, "the job finished")
		status.Phase = bcj.Phase(&status)
		p.status = status
		return p
	}
	policy := bcj.FailurePolicy(&job.Spec)
	if msg, ok := job.Annotations[musterv1.TerminateAnnotation]; ok {
		return finish(musterv1.BroadcastJobFailed, bcj.ReasonTerminated, msg, true)
	}
	if policy == musterv1.FailureFailFast && firstFailed != nil {
		return finish(musterv1.BroadcastJobFailed, bcj.ReasonPodFailed,
			fmt.Sprintf("pod %s on node %s failed (failurePolicy FailFast)", firstFailed.Name, PodNode(firstFailed)), true)
	}
	// A deadline beyond what a Duration holds is never reached: converting it would
	// wrap into the past and fail the job at once.
	if d := job.Spec.CompletionPolicy.ActiveDeadlineSeconds; d != nil && *d <= maxDeadlineSeconds {
		deadline := status.StartTime.Add(time.Duration(*d) * time.Second)
		if !o.now.Before(deadline) {
			return finish(musterv1.BroadcastJobFailed, bcj.ReasonDeadlineExceeded,
				fmt.Sprintf("the job ran longer than activeDeadlineSeconds (%ds)", *d), true)
		}
		p.requeueAfter = deadline.Sub(o.now)
	}
	always := job.Spec.CompletionPolicy.Type != musterv1.CompletionNever
	if always && counts.Desired > 0 && len(missing) == 0 && counts.Active == 0 {
		if counts.Failed > 0 {
			return finish(musterv1.BroadcastJobFailed, bcj.ReasonPodsFailed,
				fmt.Sprintf("%d of %d pods failed", counts.Failed, counts.Succeeded+counts.Failed), false)
		}
		return finish(musterv1.BroadcastJobComplete, bcj.ReasonCompleted,
			fmt.Sprintf("%d pods succeeded", counts.Succeeded), false)
	}
	paused := job.Spec.Paused
	if policy == musterv1.FailurePause && !paused && counts.Failed > bcj.PausedAt(job) {
		p.pause = true
		paused = true
	}

	if paused {
		// A paused job creates and deletes nothing: even a pod whose node is gone stays
		// until the job resumes, as upstream. Only the job's end (above) stops pods.
		p.held = misplaced
		failure := ""
		if p.pause {
			failure = fmt.Sprintf("pod %s on node %s failed (failurePolicy Pause)", firstFailed.Name, PodNode(firstFailed))
		}
		reason, msg := bcj.PausedReason(&job.Status, p.pause, failure)
		bcj.SetCondition(&status, musterv1.BroadcastJobPaused, metav1.ConditionTrue, reason, msg)
	} else {
		bcj.SetCondition(&status, musterv1.BroadcastJobPaused, metav1.ConditionFalse, bcj.ReasonNotPaused, "the job creates pods")
		p.stop = misplaced
		p.create = missing
		if status.Parallelism != nil {
			room := max(*status.Parallelism-counts.Active, 0)
			p.create = missing[:min(int(room), len(missing))]
		}
	}
	if counts.Desired == 0 {
		bcj.SetCondition(&status, musterv1.BroadcastJobNodesEligible, metav1.ConditionFalse, bcj.ReasonNoEligibleNodes, nodefit.DescribeUnfit(len(o.nodes), unfit))
	} else {
		bcj.SetCondition(&status, musterv1.BroadcastJobNodesEligible, metav1.ConditionTrue, bcj.ReasonNodesEligible,
			fmt.Sprintf("%d of %d nodes are eligible", counts.Desired, len(o.nodes)))
	}
	status.Phase = bcj.Phase(&status)
	p.status = status
	return p
}
