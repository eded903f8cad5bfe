package broadcastjob

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	bcj "github.com/musterhq/muster/api/broadcastjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func testNode(name string, mutate ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"pool": "a"}},
		Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
	for _, m := range mutate {
		m(n)
	}
	return n
}

func nodes(names ...string) []*corev1.Node {
	var out []*corev1.Node
	for _, n := range names {
		out = append(out, testNode(n))
	}
	return out
}

func testJob(mutate ...func(*musterv1.BroadcastJob)) *musterv1.BroadcastJob {
	j := &musterv1.BroadcastJob{
		ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns", UID: "u1", Generation: 1},
		Spec: musterv1.BroadcastJobSpec{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c"}}}},
		},
	}
	for _, m := range mutate {
		m(j)
	}
	return j
}

func podOn(node string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: PodName("j", node), Annotations: map[string]string{musterv1.NodeAnnotation: node}},
		Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever},
		Status:     corev1.PodStatus{Phase: phase},
	}
}

// podByAffinity is a pod tied to node only by its required node-affinity term, as a pod
// left to the scheduler is until it is scheduled, without the agent's node annotation.
func podByAffinity(node string, phase corev1.PodPhase) *corev1.Pod {
	p := podOn(node, phase)
	p.Annotations = nil
	bindToNode(&p.Spec, node)
	return p
}

func podNames(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, PodNode(p))
	}
	return out
}

func TestDecide(t *testing.T) {
	failFast := func(j *musterv1.BroadcastJob) { j.Spec.FailurePolicy.Type = musterv1.FailureFailFast }
	pausePolicy := func(j *musterv1.BroadcastJob) { j.Spec.FailurePolicy.Type = musterv1.FailurePause }
	continuePolicy := func(j *musterv1.BroadcastJob) { j.Spec.FailurePolicy.Type = musterv1.FailureContinue }
	never := func(j *musterv1.BroadcastJob) { j.Spec.CompletionPolicy.Type = musterv1.CompletionNever }
	par := func(p intstr.IntOrString) func(*musterv1.BroadcastJob) {
		return func(j *musterv1.BroadcastJob) { j.Spec.Parallelism = &p }
	}
	started := func(ago time.Duration) func(*musterv1.BroadcastJob) {
		return func(j *musterv1.BroadcastJob) { j.Status.StartTime = &metav1.Time{Time: t0.Add(-ago)} }
	}
	selector := func(j *musterv1.BroadcastJob) { j.Spec.Template.Spec.NodeSelector = map[string]string{"pool": "a"} }

	cases := []struct {
		name        string
		job         *musterv1.BroadcastJob
		nodes       []*corev1.Node
		pods        []*corev1.Pod
		wantCreate  []string
		wantStop    []string
		wantHeld    []string
		wantPause   bool
		wantPhase   musterv1.BroadcastJobPhase
		wantReason  string // reason of the Complete or Failed condition, or of NodesEligible=False
		wantCounts  musterv1.BroadcastCounts
		wantRequeue time.Duration
	}{
		{
			name: "a pod for every fitting node, in name order", job: testJob(), nodes: nodes("n2", "n1", "n3"),
			wantCreate: []string{"n1", "n2", "n3"}, wantPhase: musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 3},
		},
		{
			name: "nodes that do not fit get nothing", job: testJob(selector),
			nodes:      []*corev1.Node{testNode("n1"), testNode("n2", func(n *corev1.Node) { n.Labels["pool"] = "b" }), testNode("n3", func(n *corev1.Node) { n.Spec.Unschedulable = true })},
			wantCreate: []string{"n1"}, wantPhase: musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 1},
		},
		{
			name: "integer parallelism counts running pods", job: testJob(par(intstr.FromInt32(2))), nodes: nodes("n1", "n2", "n3", "n4"),
			pods:       []*corev1.Pod{podOn("n1", corev1.PodRunning)},
			wantCreate: []string{"n2"}, wantPhase: musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 4, Active: 1},
		},
		{
			name: "percent parallelism rounds up over desired", job: testJob(par(intstr.FromString("30%"))), nodes: nodes("n1", "n2", "n3", "n4", "n5"),
			wantCreate: []string{"n1", "n2"}, wantPhase: musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 5},
		},
		{
			name: "finished pods free their slot but their node is done", job: testJob(par(intstr.FromInt32(1))), nodes: nodes("n1", "n2"),
			pods:       []*corev1.Pod{podOn("n1", corev1.PodSucceeded)},
			wantCreate: []string{"n2"}, wantPhase: musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 2, Succeeded: 1},
		},
		{
			name: "every node done: Complete", job: testJob(), nodes: nodes("n1", "n2"),
			pods:      []*corev1.Pod{podOn("n1", corev1.PodSucceeded), podOn("n2", corev1.PodSucceeded)},
			wantPhase: musterv1.BroadcastJobCompleted, wantReason: musterv1.BroadcastJobReasonCompleted, wantCounts: musterv1.BroadcastCounts{Desired: 2, Succeeded: 2},
		},
		{
			name: "Continue: every node done with a failure completes, as in OpenKruise", job: testJob(continuePolicy), nodes: nodes("n1", "n2", "n3"),
			pods:      []*corev1.Pod{podOn("n1", corev1.PodFailed), podOn("n2", corev1.PodSucceeded), podOn("n3", corev1.PodSucceeded)},
			wantPhase: musterv1.BroadcastJobCompleted, wantReason: musterv1.BroadcastJobReasonCompleted, wantCounts: musterv1.BroadcastCounts{Desired: 3, Succeeded: 2, Failed: 1},
		},
		{
			name: "Pause, resumed: every node done with a failure still ends Failed", job: testJob(pausePolicy, func(j *musterv1.BroadcastJob) {
				j.Annotations = map[string]string{musterv1.PausedAtFailuresAnnotation: "1"}
			}),
			nodes: nodes("n1", "n2"), pods: []*corev1.Pod{podOn("n1", corev1.PodFailed), podOn("n2", corev1.PodSucceeded)},
			wantPhase: musterv1.BroadcastJobFailedPh, wantReason: musterv1.BroadcastJobReasonPodsFailed, wantCounts: musterv1.BroadcastCounts{Desired: 2, Succeeded: 1, Failed: 1},
		},
		{
			name: "Continue keeps creating after a failure", job: testJob(continuePolicy), nodes: nodes("n1", "n2"),
			pods:       []*corev1.Pod{podOn("n1", corev1.PodFailed)},
			wantCreate: []string{"n2"}, wantPhase: musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 2, Failed: 1},
		},
		{
			name: "no failurePolicy type: FailFast, the default", job: testJob(), nodes: nodes("n1", "n2", "n3"),
			pods:      []*corev1.Pod{podOn("n1", corev1.PodFailed), podOn("n2", corev1.PodRunning)},
			wantStop:  []string{"n2"},
			wantPhase: musterv1.BroadcastJobFailedPh, wantReason: musterv1.BroadcastJobReasonPodFailed, wantCounts: musterv1.BroadcastCounts{Desired: 3, Failed: 2},
		},
		{
			name: "FailFast stops every running pod at the first failure, and counts them failed", job: testJob(failFast), nodes: nodes("n1", "n2", "n3"),
			pods:      []*corev1.Pod{podOn("n1", corev1.PodFailed), podOn("n2", corev1.PodRunning)},
			wantStop:  []string{"n2"},
			wantPhase: musterv1.BroadcastJobFailedPh, wantReason: musterv1.BroadcastJobReasonPodFailed, wantCounts: musterv1.BroadcastCounts{Desired: 3, Failed: 2},
		},
		{
			name: "Pause pauses at a new failure and creates nothing", job: testJob(pausePolicy), nodes: nodes("n1", "n2"),
			pods:      []*corev1.Pod{podOn("n1", corev1.PodFailed)},
			wantPause: true, wantPhase: musterv1.BroadcastJobPausedPh, wantCounts: musterv1.BroadcastCounts{Desired: 2, Failed: 1},
		},
		{
			name: "Pause does not pause again for failures it already paused on",
			job: testJob(pausePolicy, func(j *musterv1.BroadcastJob) {
				j.Annotations = map[string]string{musterv1.PausedAtFailuresAnnotation: "1"}
			}),
			nodes: nodes("n1", "n2"), pods: []*corev1.Pod{podOn("n1", corev1.PodFailed)},
			wantCreate: []string{"n2"}, wantPhase: musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 2, Failed: 1},
		},
		{
			name: "paused: running pods go on, no new ones", job: testJob(func(j *musterv1.BroadcastJob) { j.Spec.Paused = true }), nodes: nodes("n1", "n2"),
			pods:      []*corev1.Pod{podOn("n1", corev1.PodRunning)},
			wantPhase: musterv1.BroadcastJobPausedPh, wantCounts: musterv1.BroadcastCounts{Desired: 2, Active: 1},
		},
		{
			name: "deadline passed: Failed, and running pods stopped and counted failed, as in OpenKruise",
			job: testJob(started(time.Minute), func(j *musterv1.BroadcastJob) {
				j.Spec.CompletionPolicy.ActiveDeadlineSeconds = new(int64(60))
			}),
			nodes: nodes("n1", "n2", "n3"), pods: []*corev1.Pod{podOn("n1", corev1.PodRunning), podOn("n2", corev1.PodRunning), podOn("n3", corev1.PodSucceeded)},
			wantStop:  []string{"n1", "n2"},
			wantPhase: musterv1.BroadcastJobFailedPh, wantReason: musterv1.BroadcastJobReasonDeadlineExceeded, wantCounts: musterv1.BroadcastCounts{Desired: 3, Succeeded: 1, Failed: 2},
		},
		{
			name: "deadline passed: a pod already being deleted is not counted failed",
			job: testJob(started(time.Minute), func(j *musterv1.BroadcastJob) {
				j.Spec.CompletionPolicy.ActiveDeadlineSeconds = new(int64(60))
			}),
			nodes: nodes("n1"), pods: []*corev1.Pod{func() *corev1.Pod {
				p := podOn("n1", corev1.PodRunning)
				p.DeletionTimestamp = &metav1.Time{Time: t0}
				return p
			}()},
			wantPhase: musterv1.BroadcastJobFailedPh, wantReason: musterv1.BroadcastJobReasonDeadlineExceeded, wantCounts: musterv1.BroadcastCounts{Desired: 1},
		},
		{
			name: "deadline ahead: requeue at it",
			job: testJob(started(20*time.Second), func(j *musterv1.BroadcastJob) {
				j.Spec.CompletionPolicy.ActiveDeadlineSeconds = new(int64(60))
			}),
			nodes: nodes("n1"), wantCreate: []string{"n1"}, wantRequeue: 40 * time.Second,
			wantPhase: musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 1},
		},
		{
			name: "a deadline beyond a Duration's range is never reached, not wrapped into the past",
			job: testJob(started(20*time.Second), func(j *musterv1.BroadcastJob) {
				j.Spec.CompletionPolicy.ActiveDeadlineSeconds = new(int64(10000000000))
			}),
			nodes: nodes("n1"), wantCreate: []string{"n1"},
			wantPhase: musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 1},
		},
		{
			name: "the longest deadline a Duration holds is kept",
			job: testJob(started(20*time.Second), func(j *musterv1.BroadcastJob) {
				j.Spec.CompletionPolicy.ActiveDeadlineSeconds = new(int64(bcj.MaxDeadlineSeconds))
			}),
			nodes: nodes("n1"), wantCreate: []string{"n1"}, wantRequeue: time.Duration(bcj.MaxDeadlineSeconds)*time.Second - 20*time.Second,
			wantPhase: musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 1},
		},
		{
			name: "Never does not complete and serves new nodes", job: testJob(never), nodes: nodes("n1", "n2"),
			pods:       []*corev1.Pod{podOn("n1", corev1.PodSucceeded)},
			wantCreate: []string{"n2"}, wantPhase: musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 2, Succeeded: 1},
		},
		{
			name: "Never with every node done keeps running", job: testJob(never), nodes: nodes("n1"),
			pods:      []*corev1.Pod{podOn("n1", corev1.PodSucceeded)},
			wantPhase: musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 1, Succeeded: 1},
		},
		{
			name: "no eligible node: Pending with the reasons, not Running", job: testJob(selector),
			nodes:     []*corev1.Node{testNode("n1", func(n *corev1.Node) { n.Labels["pool"] = "b" })},
			wantPhase: musterv1.BroadcastJobPending, wantReason: musterv1.BroadcastJobReasonNoEligibleNodes,
		},
		{
			name: "a running pod whose node was relabelled away is stopped, and its node is not desired", job: testJob(selector),
			nodes:     []*corev1.Node{testNode("n1", func(n *corev1.Node) { n.Labels["pool"] = "b" })},
			pods:      []*corev1.Pod{podOn("n1", corev1.PodRunning)},
			wantStop:  []string{"n1"},
			wantPhase: musterv1.BroadcastJobPending, wantReason: musterv1.BroadcastJobReasonNoEligibleNodes, wantCounts: musterv1.BroadcastCounts{Active: 1},
		},
		{
			name: "a running pod whose node was deleted is stopped, and its node is not desired", job: testJob(), nodes: nodes("n2"),
			pods:       []*corev1.Pod{podOn("n1", corev1.PodRunning)},
			wantStop:   []string{"n1"},
			wantCreate: []string{"n2"}, wantPhase: musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 1, Active: 1},
		},
		{
			name: "a finished pod whose node was deleted counts, but its node is not desired", job: testJob(), nodes: nodes("n2"),
			pods:       []*corev1.Pod{podOn("n1", corev1.PodSucceeded)},
			wantCreate: []string{"n2"}, wantPhase: musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 1, Succeeded: 1},
		},
		{
			name: "paused: a pod whose node was deleted stays until the job resumes",
			job:  testJob(func(j *musterv1.BroadcastJob) { j.Spec.Paused = true }), nodes: nodes("n2", "n3"),
			pods:      []*corev1.Pod{podOn("n1", corev1.PodRunning), podOn("n2", corev1.PodRunning)},
			wantHeld:  []string{"n1"},
			wantPhase: musterv1.BroadcastJobPausedPh, wantCounts: musterv1.BroadcastCounts{Desired: 2, Active: 2},
		},
		{
			name: "paused: a pod whose node no longer keeps it stays until the job resumes",
			job:  testJob(func(j *musterv1.BroadcastJob) { j.Spec.Paused = true }),
			nodes: []*corev1.Node{testNode("n1", func(n *corev1.Node) {
				n.Spec.Taints = []corev1.Taint{{Key: "evict", Effect: corev1.TaintEffectNoExecute}}
			})},
			pods:      []*corev1.Pod{podOn("n1", corev1.PodRunning)},
			wantHeld:  []string{"n1"},
			wantPhase: musterv1.BroadcastJobPausedPh, wantCounts: musterv1.BroadcastCounts{Active: 1},
		},
		{
			name: "paused: the job's end still stops its pods (FailFast)",
			job:  testJob(failFast, func(j *musterv1.BroadcastJob) { j.Spec.Paused = true }), nodes: nodes("n2"),
			pods:      []*corev1.Pod{podOn("n1", corev1.PodRunning), podOn("n2", corev1.PodFailed)},
			wantStop:  []string{"n1"},
			wantPhase: musterv1.BroadcastJobFailedPh, wantReason: musterv1.BroadcastJobReasonPodFailed, wantCounts: musterv1.BroadcastCounts{Desired: 1, Failed: 2},
		},
		{
			// OpenKruise deletes the pod and stops counting the node: see README, "Where
			// Muster differs from upstream".
			name: "a cordoned node keeps its running pod and stays desired", job: testJob(),
			nodes:      []*corev1.Node{testNode("n1", func(n *corev1.Node) { n.Spec.Unschedulable = true }), testNode("n2")},
			pods:       []*corev1.Pod{podOn("n1", corev1.PodRunning)},
			wantCreate: []string{"n2"}, wantPhase: musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 2, Active: 1},
		},
		{
			name: "a cordoned node without a pod gets none and is not desired", job: testJob(),
			nodes:      []*corev1.Node{testNode("n1", func(n *corev1.Node) { n.Spec.Unschedulable = true }), testNode("n2")},
			wantCreate: []string{"n2"}, wantPhase: musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 1},
		},
		{
			name: "a cordoned node's pod finishes there and the job completes", job: testJob(),
			nodes:     []*corev1.Node{testNode("n1", func(n *corev1.Node) { n.Spec.Unschedulable = true })},
			pods:      []*corev1.Pod{podOn("n1", corev1.PodSucceeded)},
			wantPhase: musterv1.BroadcastJobCompleted, wantReason: musterv1.BroadcastJobReasonCompleted, wantCounts: musterv1.BroadcastCounts{Desired: 1, Succeeded: 1},
		},
		{
			name: "the hub's terminate annotation fails the shard and stops its pods",
			job: testJob(func(j *musterv1.BroadcastJob) {
				j.Annotations = map[string]string{musterv1.TerminateAnnotation: "cluster b failed"}
			}),
			nodes: nodes("n1", "n2"), pods: []*corev1.Pod{podOn("n1", corev1.PodRunning)},
			wantStop:  []string{"n1"},
			wantPhase: musterv1.BroadcastJobFailedPh, wantReason: musterv1.BroadcastJobReasonTerminated, wantCounts: musterv1.BroadcastCounts{Desired: 2, Failed: 1},
		},
		{
			name: "a pod tied to its node only by its affinity term counts on that node", job: testJob(), nodes: nodes("n1", "n2"),
			pods:       []*corev1.Pod{podByAffinity("n1", corev1.PodPending)},
			wantCreate: []string{"n2"}, wantPhase: musterv1.BroadcastJobRunning, wantCounts: musterv1.BroadcastCounts{Desired: 2, Active: 1},
		},
		{
			name: "a pod past restartLimit counts as failed and is stopped",
			job: testJob(failFast, func(j *musterv1.BroadcastJob) {
				j.Spec.FailurePolicy.RestartLimit = 2
			}),
			nodes: nodes("n1", "n2"),
			pods: []*corev1.Pod{func() *corev1.Pod {
				p := podOn("n1", corev1.PodRunning)
				p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{RestartCount: 3}}
				return p
			}()},
			wantPhase: musterv1.BroadcastJobFailedPh, wantReason: musterv1.BroadcastJobReasonPodFailed, wantCounts: musterv1.BroadcastCounts{Desired: 2, Failed: 1},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := decide(observed{job: tc.job, nodes: tc.nodes, pods: tc.pods, now: t0})
			if !slices.Equal(p.create, tc.wantCreate) {
				t.Errorf("create = %v, want %v", p.create, tc.wantCreate)
			}
			if got := podNames(p.stop); !slices.Equal(got, tc.wantStop) {
				t.Errorf("stop = %v, want %v", got, tc.wantStop)
			}
			if got := podNames(p.held); !slices.Equal(got, tc.wantHeld) {
				t.Errorf("held = %v, want %v", got, tc.wantHeld)
			}
			if p.pause != tc.wantPause {
				t.Errorf("pause = %v, want %v", p.pause, tc.wantPause)
			}
			if p.status.Phase != tc.wantPhase {
				t.Errorf("phase = %s, want %s (conditions %+v)", p.status.Phase, tc.wantPhase, p.status.Conditions)
			}
			if p.status.BroadcastCounts != tc.wantCounts {
				t.Errorf("counts = %+v, want %+v", p.status.BroadcastCounts, tc.wantCounts)
			}
			if tc.wantReason != "" && !hasReason(p.status.Conditions, tc.wantReason) {
				t.Errorf("no condition with reason %s in %+v", tc.wantReason, p.status.Conditions)
			}
			if p.requeueAfter != tc.wantRequeue {
				t.Errorf("requeueAfter = %s, want %s", p.requeueAfter, tc.wantRequeue)
			}
			if bcj.Finished(&p.status) != (p.status.CompletionTime != nil) {
				t.Errorf("completionTime %v does not agree with phase %s", p.status.CompletionTime, p.status.Phase)
			}
		})
	}
}

func hasReason(conds []metav1.Condition, reason string) bool {
	return slices.ContainsFunc(conds, func(c metav1.Condition) bool { return c.Reason == reason })
}

func TestPodNameIsStablePerNodeAndDistinct(t *testing.T) {
	seen := map[string]string{}
	for i := range 5000 {
		node := "kwok-node-" + string(rune('a'+i%26)) + "-" + time.Duration(i).String()
		name := PodName("job", node)
		if PodName("job", node) != name {
			t.Fatalf("PodName is not stable for %s", node)
		}
		if other, dup := seen[name]; dup {
			t.Fatalf("nodes %s and %s share pod name %s", other, node, name)
		}
		seen[name] = node
	}
}

func TestPodNode(t *testing.T) {
	scheduled := podByAffinity("n1", corev1.PodRunning)
	scheduled.Spec.NodeName = "n1"
	otherTerms := podByAffinity("n1", corev1.PodPending)
	otherTerms.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}},
		MatchFields:      []corev1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{"n1", "n2"}}},
	}}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{name: "the agent's annotation", pod: podOn("n1", corev1.PodRunning), want: "n1"},
		{name: "a scheduled pod without the annotation", pod: scheduled, want: "n1"},
		{name: "a pod waiting for the scheduler, tied to its node by its affinity term", pod: podByAffinity("n1", corev1.PodPending), want: "n1"},
		{name: "an affinity term that names no single node", pod: otherTerms, want: ""},
		{name: "no node anywhere", pod: &corev1.Pod{}, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PodNode(tc.pod); got != tc.want {
				t.Errorf("PodNode = %q, want %q", got, tc.want)
			}
		})
	}
}

// The condition, and its event, that a FailFast failure writes name the failed pod's node
// also when only its affinity term says which it is.
func TestFailureMessageNamesTheNodeOfAPodTiedByAffinity(t *testing.T) {
	job := testJob(func(j *musterv1.BroadcastJob) { j.Spec.FailurePolicy.Type = musterv1.FailureFailFast })
	p := decide(observed{job: job, nodes: nodes("n1", "n2"), pods: []*corev1.Pod{podByAffinity("n1", corev1.PodFailed)}, now: t0})
	c := meta.FindStatusCondition(p.status.Conditions, musterv1.BroadcastJobFailed)
	if c == nil || !strings.Contains(c.Message, "on node n1 failed") {
		t.Errorf("Failed condition %+v: want its message to name node n1", c)
	}
}
