package job_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/musterhq/muster/agent/job"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/envtest"
)

var (
	env *envtest.Environment
	// It starts at the real time: the API server stamps deletions with the real time, which
	// the controller compares with this clock (a fixed start made a deleted pod's backoff
	// end hours after the test's clock could reach it).
	clock = clocktesting.NewFakeClock(time.Now())
)

// The controller batches a Job's changes as the agent does, on shorter times: a round at
// most batchPeriod after the first change, sooner once they pause for batchQuiet.
const (
	batchPeriod = time.Second
	batchQuiet  = 50 * time.Millisecond
)

// TestMain runs the agent's Job controller, on a clock the tests move, against a real API
// server, which also enforces its rules for the status of externally managed Jobs. The
// controller's manager engages a hub as the agent's does. There is no kubelet or
// kube-controller-manager: tests play the kubelet by setting pod phases.
func TestMain(m *testing.M) {
	os.Exit(envtest.MainMulticluster(m, &env, func(mgr mcmanager.Manager) error {
		r := &job.Reconciler{Manager: mgr, Clock: clock, Workers: 4, BatchPeriod: batchPeriod, BatchQuiet: batchQuiet, RoundDone: func(j *batchv1.Job) { seen.Done(j) },
			HubSilence: func() time.Duration { return time.Duration(hubSilence.Load()) }}
		return r.SetupWithManager(mgr)
	}))
}

// hubSilence is how long the agent has gone without reaching the hub, as the tests of
// fenced Jobs set it; a Job without a fence never reads it.
var hubSilence atomic.Int64

// seen records the rounds of the controller: the newest version of each job a round
// read and finished with.
var seen = &envtest.Rounds{}

type fixture struct {
	t  *testing.T
	ns string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return &fixture{t: t, ns: env.Namespace(t)}
}

// job creates an agent-managed Job with the given parallelism and completions.
func (f *fixture) job(parallelism, completions *int32, mutate ...func(*batchv1.Job)) *batchv1.Job {
	f.t.Helper()
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: f.ns},
		Spec: batchv1.JobSpec{
			ManagedBy:   ptr.To(musterv1.AgentManagedBy),
			Parallelism: parallelism,
			Completions: completions,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
			}},
		},
	}
	for _, m := range mutate {
		m(j)
	}
	if err := env.Client.Create(f.t.Context(), j); err != nil {
		f.t.Fatal(err)
	}
	return j
}

func (f *fixture) get(j *batchv1.Job) *batchv1.Job {
	f.t.Helper()
	out := &batchv1.Job{}
	if err := env.Client.Get(f.t.Context(), client.ObjectKeyFromObject(j), out); err != nil {
		f.t.Fatal(err)
	}
	return out
}

// pods lists the job's pods, oldest first; with all, terminating ones too.
func (f *fixture) pods(all bool) []corev1.Pod {
	f.t.Helper()
	var list corev1.PodList
	if err := env.Client.List(f.t.Context(), &list, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if all || p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b corev1.Pod) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// running returns the job's pods that are neither finished nor terminating.
func (f *fixture) running() []corev1.Pod {
	var out []corev1.Pod
	for _, p := range f.pods(false) {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	return out
}

func (f *fixture) eventually(what string, cond func() (bool, string)) {
	f.t.Helper()
	envtest.Eventually(f.t, what, cond)
}

// waitRunning waits until exactly n pods run and the status of every Job in the namespace
// counts the running pods it controls: the round that wrote it saw them, so the
// controller is done creating (a round that created more would count them too).
func (f *fixture) waitRunning(n int) []corev1.Pod {
	f.t.Helper()
	var pods []corev1.Pod
	f.eventually(fmt.Sprintf("%d running pods, as their Jobs count them", n), func() (bool, string) {
		pods = f.running()
		if len(pods) != n {
			return false, fmt.Sprintf("%d running", len(pods))
		}
		var jobs batchv1.JobList
		if err := env.Client.List(f.t.Context(), &jobs, client.InNamespace(f.ns)); err != nil {
			return false, err.Error()
		}
		for _, j := range jobs.Items {
			var controlled int32
			for _, p := range pods {
				if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == j.UID {
					controlled++
				}
			}
			if ptr.Deref(j.Spec.ManagedBy, "") == musterv1.AgentManagedBy && j.Status.Active != controlled {
				return false, fmt.Sprintf("%d running, Job %s counts %d active of its %d", n, j.Name, j.Status.Active, controlled)
			}
		}
		return true, ""
	})
	return pods
}

// observed makes the controller look at the job again and waits until one of its rounds
// that read the job as it is now (or later) is over: anything the changes made so far
// would cause, that round has done.
func (f *fixture) observed(j *batchv1.Job) {
	f.t.Helper()
	f.touch(j)
	seen.WaitPast(f.t, f.get(j))
}

// finish plays the kubelet for one pod.
func (f *fixture) finish(p corev1.Pod, phase corev1.PodPhase, exitCode int32, conditions ...corev1.PodCondition) {
	f.t.Helper()
	cur := &corev1.Pod{}
	if err := env.Client.Get(f.t.Context(), client.ObjectKeyFromObject(&p), cur); err != nil {
		f.t.Fatal(err)
	}
	now := metav1.NewTime(clock.Now())
	cur.Status.Phase = phase
	cur.Status.Conditions = append(conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: now})
	cur.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "main", Image: "busybox", ImageID: "busybox",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exitCode, FinishedAt: now, StartedAt: now}},
	}}
	if err := env.Client.Status().Update(f.t.Context(), cur); err != nil {
		f.t.Fatal(err)
	}
}

// setReady plays the kubelet: the pod runs and is Ready.
func (f *fixture) setReady(p corev1.Pod) {
	f.t.Helper()
	f.setReadiness(p, true)
}

// setReadiness plays the kubelet: the pod runs, ready or not.
func (f *fixture) setReadiness(p corev1.Pod, ready bool) {
	f.t.Helper()
	cur := &corev1.Pod{}
	if err := env.Client.Get(f.t.Context(), client.ObjectKeyFromObject(&p), cur); err != nil {
		f.t.Fatal(err)
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	cur.Status.Phase = corev1.PodRunning
	cur.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
	if err := env.Client.Status().Update(f.t.Context(), cur); err != nil {
		f.t.Fatal(err)
	}
}

// counts is the part of a Job's status the tests compare.
type counts struct {
	Active, Ready, Succeeded, Failed, Terminating int32
	Completed, FailedIndexes                      string
}

func countsOf(s *batchv1.JobStatus) counts {
	return counts{
		Active: s.Active, Ready: ptr.Deref(s.Ready, 0), Succeeded: s.Succeeded, Failed: s.Failed,
		Terminating: ptr.Deref(s.Terminating, 0), Completed: s.CompletedIndexes, FailedIndexes: ptr.Deref(s.FailedIndexes, ""),
	}
}

// waitStatus waits for the counts.
func (f *fixture) waitStatus(j *batchv1.Job, want counts) *batchv1.Job {
	f.t.Helper()
	var got *batchv1.Job
	f.eventually(fmt.Sprintf("status %+v", want), func() (bool, string) {
		got = f.get(j)
		return countsOf(&got.Status) == want, fmt.Sprintf("%+v conditions %s", countsOf(&got.Status), conditions(got))
	})
	return got
}

// waitCondition waits for a True condition with reason and returns the job.
func (f *fixture) waitCondition(j *batchv1.Job, t batchv1.JobConditionType, reason string) *batchv1.Job {
	f.t.Helper()
	var got *batchv1.Job
	f.eventually(fmt.Sprintf("condition %s/%s", t, reason), func() (bool, string) {
		got = f.get(j)
		for _, c := range got.Status.Conditions {
			if c.Type == t && c.Status == corev1.ConditionTrue && (reason == "" || c.Reason == reason) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v conditions %s", countsOf(&got.Status), conditions(got))
	})
	return got
}

func conditions(j *batchv1.Job) string {
	var parts []string
	for _, c := range j.Status.Conditions {
		parts = append(parts, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	return strings.Join(parts, " ")
}

func hasCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func jobFinishedOrEnding(j *batchv1.Job) bool {
	return hasCondition(j, batchv1.JobComplete) || hasCondition(j, batchv1.JobFailed) || hasCondition(j, batchv1.JobFailureTarget) || hasCondition(j, batchv1.JobSuccessCriteriaMet)
}

func (f *fixture) patchJob(j *batchv1.Job, mutate func(*batchv1.Job)) {
	f.t.Helper()
	cur := f.get(j)
	patch := client.MergeFrom(cur.DeepCopy())
	mutate(cur)
	if err := env.Client.Patch(f.t.Context(), cur, patch); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) patchPod(p corev1.Pod, mutate func(*corev1.Pod)) {
	f.t.Helper()
	cur := &corev1.Pod{}
	if err := env.Client.Get(f.t.Context(), client.ObjectKeyFromObject(&p), cur); err != nil {
		f.t.Fatal(err)
	}
	patch := client.MergeFrom(cur.DeepCopy())
	mutate(cur)
	if err := env.Client.Patch(f.t.Context(), cur, patch); err != nil {
		f.t.Fatal(err)
	}
}

// touch makes the controller look at the job again after the clock moved.
func (f *fixture) touch(j *batchv1.Job) {
	f.patchJob(j, func(j *batchv1.Job) {
		if j.Annotations == nil {
			j.Annotations = map[string]string{}
		}
		j.Annotations["touched"] = fmt.Sprint(time.Now().UnixNano())
	})
}

func (f *fixture) tryGet(j *batchv1.Job) (*batchv1.Job, error) {
	out := &batchv1.Job{}
	return out, env.Client.Get(f.t.Context(), client.ObjectKeyFromObject(j), out)
}

// touchIfThere is touch for a job the controller may have deleted already.
func (f *fixture) touchIfThere(j *batchv1.Job) {
	f.t.Helper()
	cur, err := f.tryGet(j)
	if err != nil {
		return
	}
	patch := client.MergeFrom(cur.DeepCopy())
	if cur.Annotations == nil {
		cur.Annotations = map[string]string{}
	}
	cur.Annotations["touched"] = fmt.Sprint(time.Now().UnixNano())
	_ = env.Client.Patch(f.t.Context(), cur, patch)
}
