package broadcastjob

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bcj "github.com/musterhq/muster/api/broadcastjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/placement/nodefit"
	"github.com/musterhq/muster/placement/parallelism"
)

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

// PodNode is the node a job pod is bound to: the one the agent chose for it (its
// annotation), else the one it runs on, else the one its node-affinity term names. A pod
// left to the scheduler is tied to its node only by that term until it is scheduled; read
// from there too, a pod whose annotation was removed still counts on its node (no second
// pod is attempted there) and is named with its node in messages and events.
func PodNode(pod *corev1.Pod) string {
	if n := pod.Annotations[musterv1.NodeAnnotation]; n != "" {
		return n
	}
	if pod.Spec.NodeName != "" {
		return pod.Spec.NodeName
	}
	return affinityNode(pod.Spec.Affinity)
}

// affinityNode is the node a required node-affinity term names by metadata.name, as
// bindToNode writes it: a single In value. Empty when there is no such term.
func affinityNode(a *corev1.Affinity) string {
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, r := range term.MatchFields {
			if r.Key == metav1.ObjectNameField && r.Operator == corev1.NodeSelectorOpIn && len(r.Values) == 1 {
				return r.Values[0]
			}
		}
	}
	return ""
}

// decide computes a reconcile's plan for a job that has not finished: count the pods and
// the nodes, decide whether the job ends, and otherwise plan the round and its conditions.
func decide(o observed) plan {
	fit := nodefit.NewTemplate(&o.job.Spec.Template.Spec)
	pods := countPods(o, fit)
	want := wantNodes(o.nodes, fit, pods.withPod)
	status := startStatus(o)
	status.BroadcastCounts = pods.counts
	status.Desired = want.eligible + int32(len(want.missing))
	status.Parallelism = parallelism.Resolve(o.job.Spec.Parallelism, status.Desired)

	p := plan{restartsExceeded: pods.restartsExceeded}
	end, requeueAfter := decideEnd(o, status, pods.firstFailed, len(want.missing))
	p.requeueAfter = requeueAfter
	if end != nil {
		return finish(p, status, *end, pods.active, o.now)
	}
	p = planRound(p, o.job, &status, pods, want.missing)
	setNodesEligible(&status, want.unfit, len(o.nodes))
	status.Phase = bcj.Phase(&status)
	p.status = status
	return p
}

// startStatus is the job's status as this round starts from it: the per-cluster list is
// the hub's, and the first round stamps the start time.
func startStatus(o observed) musterv1.BroadcastJobStatus {
	status := *o.job.Status.DeepCopy()
	status.ObservedGeneration = o.job.Generation
	status.Clusters, status.ClustersOmitted = nil, 0
	if status.StartTime == nil {
		status.StartTime = &metav1.Time{Time: o.now}
	}
	return status
}

// podTally is what the job's pods say, walked once.
type podTally struct {
	// counts has every pod as active, succeeded or failed; Desired is left to wantNodes.
	counts musterv1.BroadcastCounts
	// active are the active pods not already being deleted; misplaced are those of them
	// whose node is gone or no longer keeps them.
	active, misplaced []*corev1.Pod
	// firstFailed is the failed pod with the smallest name, so messages do not flap.
	firstFailed *corev1.Pod
	// restartsExceeded are running pods past the restart limit.
	restartsExceeded []*corev1.Pod
	// withPod are the nodes that have a pod of the job, in any phase.
	withPod map[string]bool
}

// countPods classifies the job's pods against the nodes that exist now.
func countPods(o observed, fit *nodefit.Template) podTally {
	nodes := make(map[string]*corev1.Node, len(o.nodes))
	for _, n := range o.nodes {
		nodes[n.Name] = n
	}
	t := podTally{withPod: make(map[string]bool, len(o.pods))}
	for _, pod := range o.pods {
		name := PodNode(pod)
		t.withPod[name] = true
		result, exceeded := outcome(pod, o.job.Spec.FailurePolicy.RestartLimit)
		switch result {
		case podSucceeded:
			t.counts.Succeeded++
		case podFailed:
			t.counts.Failed++
			if t.firstFailed == nil || pod.Name < t.firstFailed.Name {
				t.firstFailed = pod
			}
			if exceeded {
				t.restartsExceeded = append(t.restartsExceeded, pod)
			}
		case podActive:
			t.counts.Active++
			if pod.DeletionTimestamp != nil {
				continue
			}
			t.active = append(t.active, pod)
			if node, ok := nodes[name]; !ok || !fit.Keeps(node) {
				t.misplaced = append(t.misplaced, pod)
			}
		}
	}
	return t
}

// nodeDemand is which nodes the job wants. desired counts the nodes that exist and are
// eligible, as upstream does: those that keep the job's pod and those that fit one still
// to come. A pod whose node is gone or no longer keeps it counts as active, succeeded or
// failed, but not as a node the job wants.
type nodeDemand struct {
	// eligible counts the nodes with a pod that still keep it.
	eligible int32
	// missing are the nodes that fit a pod and have none yet, sorted.
	missing []string
	// unfit counts the nodes without a pod that do not fit one, by reason.
	unfit map[nodefit.Reason]int
}

// wantNodes sorts the nodes into those the job wants and those it cannot use.
func wantNodes(nodes []*corev1.Node, fit *nodefit.Template, withPod map[string]bool) nodeDemand {
	d := nodeDemand{unfit: map[nodefit.Reason]int{}}
	for _, n := range nodes {
		if withPod[n.Name] {
			if fit.Keeps(n) {
				d.eligible++
			}
			continue
		}
		if reason := fit.Check(n); reason != nodefit.Fits {
			d.unfit[reason]++
			continue
		}
		d.missing = append(d.missing, n.Name)
	}
	slices.Sort(d.missing)
	return d
}

// ending is how a job ends: the condition it gets, why, and whether its running pods stop.
type ending struct {
	condition, reason, message string
	stopActive                 bool
}

// decideEnd says whether the job ends in this round, in order of precedence: terminated by
// the hub, a failure under FailFast, the deadline, every wanted node done. requeueAfter is
// when the deadline will pass, for a job that goes on or completes before it.
func decideEnd(o observed, status musterv1.BroadcastJobStatus, firstFailed *corev1.Pod, missing int) (end *ending, requeueAfter time.Duration) {
	job := o.job
	if msg, ok := job.Annotations[musterv1.TerminateAnnotation]; ok {
		return &ending{musterv1.BroadcastJobFailed, musterv1.BroadcastJobReasonTerminated, msg, true}, 0
	}
	if bcj.FailurePolicy(&job.Spec) == musterv1.FailureFailFast && firstFailed != nil {
		return &ending{musterv1.BroadcastJobFailed, musterv1.BroadcastJobReasonPodFailed,
			fmt.Sprintf("pod %s on node %s failed (failurePolicy FailFast)", firstFailed.Name, PodNode(firstFailed)), true}, 0
	}
	if d, ok := bcj.Deadline(job, status.StartTime.Time); ok {
		if !o.now.Before(d) {
			return &ending{musterv1.BroadcastJobFailed, musterv1.BroadcastJobReasonDeadlineExceeded,
				fmt.Sprintf("the job ran longer than activeDeadlineSeconds (%ds)", *job.Spec.CompletionPolicy.ActiveDeadlineSeconds), true}, 0
		}
		requeueAfter = d.Sub(o.now)
	}
	return completion(job, status.BroadcastCounts, missing), requeueAfter
}

// completion ends a job of completionPolicy Always once every wanted node has a finished
// pod: Complete, or Failed if any pod failed and failurePolicy is not Continue (under
// which failures never fail the job, as in OpenKruise). Finished pods keep running
// nowhere, so nothing is stopped.
func completion(job *musterv1.BroadcastJob, counts musterv1.BroadcastCounts, missing int) *ending {
	if job.Spec.CompletionPolicy.Type == musterv1.CompletionNever || counts.Desired == 0 || missing > 0 || counts.Active > 0 {
		return nil
	}
	if counts.Failed == 0 {
		return &ending{musterv1.BroadcastJobComplete, musterv1.BroadcastJobReasonCompleted,
			fmt.Sprintf("%d pods succeeded", counts.Succeeded), false}
	}
	if bcj.FailurePolicy(&job.Spec) == musterv1.FailureContinue {
		return &ending{musterv1.BroadcastJobComplete, musterv1.BroadcastJobReasonCompleted,
			fmt.Sprintf("%d pods succeeded, %d failed (failurePolicy Continue)", counts.Succeeded, counts.Failed), false}
	}
	return &ending{musterv1.BroadcastJobFailed, musterv1.BroadcastJobReasonPodsFailed,
		fmt.Sprintf("%d of %d pods failed", counts.Failed, counts.Succeeded+counts.Failed), false}
}

// finish makes p the job's last plan: it creates nothing and, unless its pods all finished,
// stops the running ones; the job's status is final from here.
func finish(p plan, status musterv1.BroadcastJobStatus, end ending, active []*corev1.Pod, now time.Time) plan {
	if end.stopActive {
		// The pods it stops count as failed, as in OpenKruise: they did not get to
		// finish. Pods already being deleted for another reason count nowhere.
		p.stop = active
		status.Failed += int32(len(active))
		status.Active = 0
	}
	p.create = nil
	status.CompletionTime = &metav1.Time{Time: now}
	bcj.SetCondition(&status, end.condition, metav1.ConditionTrue, end.reason, end.message)
	bcj.SetCondition(&status, musterv1.BroadcastJobPaused, metav1.ConditionFalse, end.reason, "the job finished")
	status.Phase = bcj.Phase(&status)
	p.status = status
	return p
}

// planRound decides whether a running job is paused and sets its Paused condition. A
// paused job creates and deletes nothing: even a pod whose node is gone stays until the
// job resumes, as upstream; only the job's end stops pods. A running job stops its
// misplaced pods and creates what its parallelism allows on the missing nodes.
func planRound(p plan, job *musterv1.BroadcastJob, status *musterv1.BroadcastJobStatus, pods podTally, missing []string) plan {
	p.pause = bcj.PausesNow(job, pods.counts.Failed)
	if !job.Spec.Paused && !p.pause {
		bcj.SetCondition(status, musterv1.BroadcastJobPaused, metav1.ConditionFalse, musterv1.BroadcastJobReasonNotPaused, "the job creates pods")
		p.stop = pods.misplaced
		p.create = creatable(missing, status.Parallelism, status.Active)
		return p
	}
	p.held = pods.misplaced
	failure := ""
	if p.pause {
		failure = fmt.Sprintf("pod %s on node %s failed (failurePolicy Pause)", pods.firstFailed.Name, PodNode(pods.firstFailed))
	}
	reason, msg := bcj.PausedReason(&job.Status, p.pause, failure)
	bcj.SetCondition(status, musterv1.BroadcastJobPaused, metav1.ConditionTrue, reason, msg)
	return p
}

// creatable are the missing nodes that get a pod now: all of them, or as many as the
// parallelism leaves room for beside the active pods, in order.
func creatable(missing []string, par *int32, active int32) []string {
	if par == nil {
		return missing
	}
	room := max(*par-active, 0)
	return missing[:min(int(room), len(missing))]
}

// setNodesEligible says whether any node wants the job's pod, and if none, why not.
func setNodesEligible(status *musterv1.BroadcastJobStatus, unfit map[nodefit.Reason]int, nodes int) {
	if status.Desired == 0 {
		bcj.SetCondition(status, musterv1.BroadcastJobNodesEligible, metav1.ConditionFalse, musterv1.BroadcastJobReasonNoEligibleNodes, nodefit.DescribeUnfit(nodes, unfit))
		return
	}
	bcj.SetCondition(status, musterv1.BroadcastJobNodesEligible, metav1.ConditionTrue, musterv1.BroadcastJobReasonNodesEligible,
		fmt.Sprintf("%d of %d nodes are eligible", status.Desired, nodes))
}
