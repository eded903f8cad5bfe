package eventrelay_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	apiwork "github.com/musterhq/muster/api/work"
	"github.com/musterhq/muster/internal/testing/envtest"
)

func TestWarningsAboutAWorksJobAndItsPodsReachTheWork(t *testing.T) {
	ns := env.Namespace(t)
	work := createWork(t, "w-job")
	job := createJob(t, ns, "crawl", work.Name)
	pod := createPod(t, ns, "crawl-0", job)

	warn(t, job, "BackoffLimitExceeded", "Job has reached the specified backoff limit")
	warn(t, pod, "FailedScheduling", "0/3 nodes are available: 3 Insufficient cpu.")

	waitForNotes(t, work, []string{
		"BackoffLimitExceeded: c1: Job " + ns + "/crawl: Job has reached the specified backoff limit",
		"FailedScheduling: c1: Pod " + ns + "/crawl-0: 0/3 nodes are available: 3 Insufficient cpu.",
	})
}

func TestEventsNotAboutAWorkStayInTheMember(t *testing.T) {
	ns := env.Namespace(t)
	work := createWork(t, "w-other")
	job := createJob(t, ns, "own", work.Name)
	stranger := createJob(t, ns, "stranger", "")
	strangerPod := createPod(t, ns, "stranger-0", stranger)
	unlabelled := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"}, Spec: podSpec()}
	if err := env.Client.Create(t.Context(), unlabelled); err != nil {
		t.Fatal(err)
	}

	warn(t, stranger, "BackoffLimitExceeded", "not a Work's job")
	warn(t, strangerPod, "FailedScheduling", "not a Work's pod")
	warn(t, unlabelled, "FailedScheduling", "a pod the agent did not create")
	normal := event(job, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod")
	if err := env.Client.Create(t.Context(), normal); err != nil {
		t.Fatal(err)
	}
	// One relayed warning, recorded after the others: once it arrived, the others had
	// their turn.
	warn(t, job, "FailedCreate", "exceeded quota")
	waitForNotes(t, work, []string{"FailedCreate: c1: Job " + ns + "/own: exceeded quota"})

	var all corev1.EventList
	if err := env.Client.List(t.Context(), &all, client.InNamespace(musterv1.MemberNamespace(clusterName))); err != nil {
		t.Fatal(err)
	}
	for _, ev := range all.Items {
		if strings.Contains(ev.Message, "not a Work's") || strings.Contains(ev.Message, "did not create") || ev.Reason == "SuccessfulCreate" {
			t.Errorf("relayed %s %q about %s", ev.Reason, ev.Message, ev.InvolvedObject.Name)
		}
	}
}

// A job whose pods fail in a loop uses up its own Work's budget and no other's.
func TestAFloodingJobUsesOnlyItsOwnWorksBudget(t *testing.T) {
	ns := env.Namespace(t)
	noisy, quiet := createWork(t, "w-noisy"), createWork(t, "w-quiet")
	noisyJob, quietJob := createJob(t, ns, "noisy", noisy.Name), createJob(t, ns, "quiet", quiet.Name)

	for i := range 20 {
		pod := createPod(t, ns, fmt.Sprintf("noisy-%d", i), noisyJob)
		warn(t, pod, "Failed", "Error: ImagePullBackOff")
	}
	warn(t, quietJob, "FailedCreate", "exceeded quota")
	waitForNotes(t, quiet, []string{"FailedCreate: c1: Job " + ns + "/quiet: exceeded quota"})

	// The quiet Work's warning came after all twenty; the noisy Work got its budget's worth.
	if got := notes(t, noisy); len(got) != budget.Burst {
		t.Errorf("the noisy Work received %d events, want its budget of %d:\n%s", len(got), budget.Burst, strings.Join(got, "\n"))
	}
}

func createWork(t *testing.T, name string) *musterv1.Work {
	t.Helper()
	w := &musterv1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: musterv1.MemberNamespace(clusterName), Name: name}}
	if err := env.Client.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	return w
}

// createJob creates a Job as the agent applies it for work (no Work label when work is
// empty).
func createJob(t *testing.T, ns, name, work string) *batchv1.Job {
	t.Helper()
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       batchv1.JobSpec{ManagedBy: ptrTo(musterv1.AgentManagedBy), Template: corev1.PodTemplateSpec{Spec: podSpec()}},
	}
	if work != "" {
		j.Labels = map[string]string{apiwork.Label: work}
	}
	if err := env.Client.Create(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	return j
}

// createPod creates a pod of job as the agent's Job controller does.
func createPod(t *testing.T, ns, name string, job *batchv1.Job) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, Labels: map[string]string{musterv1.ControllerLabel: "job"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
		},
		Spec: podSpec(),
	}
	if err := env.Client.Create(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

func podSpec() corev1.PodSpec {
	return corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}
}

// warn records a Warning event in the member as the kubelet or a controller would.
func warn(t *testing.T, about client.Object, reason, message string) {
	t.Helper()
	if err := env.Client.Create(t.Context(), event(about, corev1.EventTypeWarning, reason, message)); err != nil {
		t.Fatal(err)
	}
}

func event(about client.Object, eventType, reason, message string) *corev1.Event {
	kind := "Pod"
	apiVersion := "v1"
	if _, ok := about.(*batchv1.Job); ok {
		kind, apiVersion = "Job", batchv1.SchemeGroupVersion.String()
	}
	now := metav1.NewTime(time.Now())
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: about.GetNamespace(), GenerateName: about.GetName() + "."},
		InvolvedObject: corev1.ObjectReference{
			Kind: kind, APIVersion: apiVersion, Namespace: about.GetNamespace(), Name: about.GetName(), UID: about.GetUID(),
		},
		Type: eventType, Reason: reason, Message: message, Count: 1,
		FirstTimestamp: now, LastTimestamp: now, Source: corev1.EventSource{Component: "test"},
	}
}

// notes are the hub's events about work, as "reason: message", sorted.
func notes(t *testing.T, work *musterv1.Work) []string {
	t.Helper()
	var list corev1.EventList
	if err := env.Client.List(t.Context(), &list, client.InNamespace(work.Namespace),
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("involvedObject.uid", string(work.UID))}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range list.Items {
		if ev.Type != corev1.EventTypeWarning {
			t.Errorf("relayed event %s has type %s", ev.Name, ev.Type)
		}
		out = append(out, ev.Reason+": "+ev.Message)
	}
	slices.Sort(out)
	return out
}

func waitForNotes(t *testing.T, work *musterv1.Work, want []string) {
	t.Helper()
	slices.Sort(want)
	envtest.Eventually(t, "the Work's relayed events", func() (bool, string) {
		got := notes(t, work)
		return slices.Equal(got, want), strings.Join(got, "\n")
	})
}

func ptrTo[T any](v T) *T { return &v }
