//go:build e2e

package work

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

// newWork builds a Work for a member from typed objects.
func newWork(t testing.TB, cluster, name string, objs ...client.Object) *musterv1.Work {
	t.Helper()
	w := &musterv1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: musterv1.MemberNamespace(cluster), Name: name}}
	for _, o := range objs {
		gvk, err := apiutil.GVKForObject(o, scheme.Scheme)
		if err != nil {
			t.Fatal(err)
		}
		o.GetObjectKind().SetGroupVersionKind(gvk)
		raw, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		w.Spec.Manifests = append(w.Spec.Manifests, musterv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	return w
}

func configMap(ns, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"k": "v"}}
}

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// job is a plain batch/v1 Job run by the member's own job controller; its pod succeeds
// after runFor.
func job(ns, name string, runFor time.Duration) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To(int32(0)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      map[string]string{"e2e.muster.dev/outcome": "Succeeded"},
					Annotations: map[string]string{"e2e.muster.dev/delay": runFor.String()},
				},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"sleep", fmt.Sprint(int(runFor.Seconds()))}}},
				},
			},
		},
	}
}

func hub() client.Client { return fleet.Hub.Client }

func member(name string) *framework.Cluster {
	for _, m := range fleet.Members {
		if m.Name == name {
			return m
		}
	}
	panic("no member " + name)
}

// waitForWork polls the Work until done says so.
func waitForWork(t testing.TB, key types.NamespacedName, timeout time.Duration, what string, done func(*musterv1.Work) bool) *musterv1.Work {
	t.Helper()
	var w musterv1.Work
	err := framework.Until(context.Background(), timeout, what, func(ctx context.Context) (bool, string, error) {
		if err := hub().Get(ctx, key, &w); err != nil {
			return false, err.Error(), nil
		}
		return done(&w), fmt.Sprintf("status %+v", w.Status.Conditions), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return &w
}

func applied(w *musterv1.Work) bool {
	return w.Status.ObservedGeneration == w.Generation && meta.IsStatusConditionTrue(w.Status.Conditions, musterv1.WorkApplied)
}

// manifestStatusOf returns the status of the manifest with that kind and name.
func manifestStatusOf(w *musterv1.Work, kind, name string) *musterv1.ManifestStatus {
	for i := range w.Status.Manifests {
		m := &w.Status.Manifests[i]
		if m.Resource.Kind == kind && m.Resource.Name == name {
			return m
		}
	}
	return nil
}

func keyOf(w *musterv1.Work) types.NamespacedName {
	return types.NamespacedName{Namespace: w.Namespace, Name: w.Name}
}
