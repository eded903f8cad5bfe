//go:build e2e

package work

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

// A Work with a Namespace, a ConfigMap and a plain Job appears in the member, and the
// Job's status follows it to Complete in the Work's status.
func TestWorkAppliesObjectsAndFeedsBackJobStatus(t *testing.T) {
	ctx := t.Context()
	w := newWork(t, "member1", "hello", namespace("hello"), configMap("hello", "settings"), job("hello", "report", 3*time.Second))
	if err := hub().Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	m := member("member1")
	if err := framework.Until(ctx, 30*time.Second, "the Work's objects in member1", func(ctx context.Context) (bool, string, error) {
		errNs := m.Client.Get(ctx, types.NamespacedName{Name: "hello"}, &corev1.Namespace{})
		errCM := m.Client.Get(ctx, types.NamespacedName{Namespace: "hello", Name: "settings"}, &corev1.ConfigMap{})
		errJob := m.Client.Get(ctx, types.NamespacedName{Namespace: "hello", Name: "report"}, &batchv1.Job{})
		return errNs == nil && errCM == nil && errJob == nil, "", nil
	}); err != nil {
		t.Fatal(err)
	}
	done := waitForWork(t, keyOf(w), 60*time.Second, "the Job's Complete status in the Work", func(w *musterv1.Work) bool {
		ms := manifestStatusOf(w, "Job", "report")
		if ms == nil || ms.Status == nil {
			return false
		}
		var st batchv1.JobStatus
		if err := json.Unmarshal(ms.Status.Raw, &st); err != nil {
			return false
		}
		for _, c := range st.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return st.Succeeded == 1
			}
		}
		return false
	})
	for _, ms := range done.Status.Manifests {
		if !meta.IsStatusConditionTrue(ms.Conditions, musterv1.WorkApplied) || !meta.IsStatusConditionTrue(ms.Conditions, musterv1.WorkAvailable) {
			t.Errorf("manifest %s/%s: conditions %+v, want Applied and Available", ms.Resource.Kind, ms.Resource.Name, ms.Conditions)
		}
	}
	if !meta.IsStatusConditionTrue(done.Status.Conditions, musterv1.WorkApplied) {
		t.Errorf("Work conditions %+v, want Applied", done.Status.Conditions)
	}
}

func TestDeletingAWorkDeletesItsObjects(t *testing.T) {
	ctx := t.Context()
	m := member("member2")
	w := newWork(t, "member2", "to-delete", configMap("default", "doomed"))
	if err := hub().Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	waitForWork(t, keyOf(w), 30*time.Second, "applied", applied)
	if err := hub().Delete(ctx, w); err != nil {
		t.Fatal(err)
	}
	err := framework.Until(ctx, 30*time.Second, "the ConfigMap and the Work to be gone", func(ctx context.Context) (bool, string, error) {
		cmErr := m.Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "doomed"}, &corev1.ConfigMap{})
		wErr := hub().Get(ctx, keyOf(w), &musterv1.Work{})
		return apierrors.IsNotFound(cmErr) && apierrors.IsNotFound(wErr), "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestOrphanedObjectsStay(t *testing.T) {
	ctx := t.Context()
	m := member("member2")
	w := newWork(t, "member2", "to-orphan", configMap("default", "kept"))
	w.Spec.DeleteOption = &musterv1.DeleteOption{PropagationPolicy: musterv1.DeletePropagationOrphan}
	if err := hub().Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	waitForWork(t, keyOf(w), 30*time.Second, "applied", applied)
	if err := hub().Delete(ctx, w); err != nil {
		t.Fatal(err)
	}
	if err := framework.Until(ctx, 30*time.Second, "the Work to be gone", func(ctx context.Context) (bool, string, error) {
		return apierrors.IsNotFound(hub().Get(ctx, keyOf(w), &musterv1.Work{})), "", nil
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if err := m.Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "kept"}, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("the orphaned ConfigMap: %v, want it kept", err)
	}
}

// One manifest the API server rejects is reported with its message; the others apply.
func TestBadManifestDoesNotBlockTheOthers(t *testing.T) {
	ctx := t.Context()
	bad := job("default", "invalid", time.Second)
	bad.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	w := newWork(t, "member1", "mixed", configMap("default", "before"), bad, configMap("default", "after"))
	if err := hub().Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	done := waitForWork(t, keyOf(w), 30*time.Second, "all three manifests reported", func(w *musterv1.Work) bool {
		return w.Status.ObservedGeneration == w.Generation && len(w.Status.Manifests) == 3
	})
	badStatus := manifestStatusOf(done, "Job", "invalid")
	c := meta.FindStatusCondition(badStatus.Conditions, musterv1.WorkApplied)
	if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "restartPolicy") {
		t.Errorf("the invalid Job's Applied condition = %+v, want False with the API server's message about restartPolicy", c)
	}
	for _, name := range []string{"before", "after"} {
		ms := manifestStatusOf(done, "ConfigMap", name)
		if ms == nil || !meta.IsStatusConditionTrue(ms.Conditions, musterv1.WorkApplied) {
			t.Errorf("ConfigMap %s: %+v, want Applied", name, ms)
		}
		if err := member("member1").Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: name}, &corev1.ConfigMap{}); err != nil {
			t.Errorf("ConfigMap %s in member1: %v", name, err)
		}
	}
	if meta.IsStatusConditionTrue(done.Status.Conditions, musterv1.WorkApplied) {
		t.Errorf("the Work claims Applied although a manifest failed: %+v", done.Status.Conditions)
	}
}
