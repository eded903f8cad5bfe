package job_test

import (
	"fmt"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// manualSelector selects the pods labelled app=<name>, as a Job recreated to take over the
// pods of one deleted with --cascade=orphan would.
func manualSelector(name string) func(*batchv1.Job) {
	return func(j *batchv1.Job) {
		j.Spec.ManualSelector = ptr.To(true)
		j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
		j.Spec.Template.Labels = map[string]string{"app": name}
	}
}

// loosePod creates a pod labelled as the agent labels its Job pods, owned by owner's
// controller reference when it is set.
func (f *fixture) loosePod(name, app string, owner *metav1.OwnerReference, mutate ...func(*corev1.Pod)) corev1.Pod {
	f.t.Helper()
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: map[string]string{"app": app, musterv1.ControllerLabel: "job"}},
		Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
	}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	for _, m := range mutate {
		m(&p)
	}
	if err := env.Client.Create(f.t.Context(), &p); err != nil {
		f.t.Fatal(err)
	}
	return p
}

func (f *fixture) podNamed(name string) corev1.Pod {
	f.t.Helper()
	for _, p := range f.pods(true) {
		if p.Name == name {
			return p
		}
	}
	f.t.Fatalf("no pod %s", name)
	return corev1.Pod{}
}

func TestOrphanPodsMatchingTheSelectorAreAdopted(t *testing.T) {
	f := newFixture(t)
	orphan := f.loosePod("orphan", "adopt", nil)
	other := &metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: types.UID("other"), Controller: ptr.To(true)}
	foreign := f.loosePod("foreign", "adopt", other)
	j := f.job(ptr.To[int32](2), ptr.To[int32](2), manualSelector("adopt"))
	uid := f.get(j).UID
	f.eventually("the orphan adopted", func() (bool, string) {
		p := f.podNamed(orphan.Name)
		ref := metav1.GetControllerOf(&p)
		return ref != nil && ref.UID == uid && slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer), fmt.Sprint(p.OwnerReferences, p.Finalizers)
	})
	// The adopted pod is one of the two: the job starts one more, not two.
	f.waitRunning(3)
	f.waitStatus(j, counts{Active: 2})
	if ref := metav1.GetControllerOf(ptr.To(f.podNamed(foreign.Name))); ref == nil || ref.UID != other.UID {
		t.Errorf("another controller's pod was taken: %v", ref)
	}
	f.finish(f.podNamed(orphan.Name), corev1.PodSucceeded, 0)
	f.waitStatus(j, counts{Active: 1, Succeeded: 1})
}

func TestAnOrphanAppearingLaterIsAdopted(t *testing.T) {
	f := newFixture(t)
	j := f.job(ptr.To[int32](1), ptr.To[int32](3), manualSelector("later"))
	f.waitRunning(1)
	uid := f.get(j).UID
	// Adopted, it makes one pod too many for parallelism 1: bound to a node, it is not the
	// one the scale-down removes (the Job's own pod waits for a node).
	orphan := f.loosePod("orphan", "later", nil, func(p *corev1.Pod) { p.Spec.NodeName = "node-a" })
	f.eventually("the orphan adopted", func() (bool, string) {
		p := f.podNamed(orphan.Name)
		ref := metav1.GetControllerOf(&p)
		return ref != nil && ref.UID == uid, fmt.Sprint(p.OwnerReferences)
	})
}

func TestTemplateCompletionIndexVariableIsNotAddedTwice(t *testing.T) {
	f := newFixture(t)
	f.job(ptr.To[int32](1), ptr.To[int32](1), indexedMode, func(j *batchv1.Job) {
		j.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "JOB_COMPLETION_INDEX", Value: "from-template"}}
	})
	pods := f.waitRunning(1)
	var vars []corev1.EnvVar
	for _, v := range pods[0].Spec.Containers[0].Env {
		if v.Name == "JOB_COMPLETION_INDEX" {
			vars = append(vars, v)
		}
	}
	if len(vars) != 1 || vars[0].Value != "from-template" {
		t.Errorf("JOB_COMPLETION_INDEX defined %d times: %+v", len(vars), vars)
	}
}
