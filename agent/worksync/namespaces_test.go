package worksync_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/musterhq/muster/agent/worksync"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// A namespace the agent creates for a manifest is marked as its own, and stays when the
// Work goes: other jobs' Works share namespaces, and a terminating namespace would refuse
// their objects.
func TestCreatedNamespaceIsMarkedAndOutlivesItsWork(t *testing.T) {
	name, ns := unique("ns-owner"), unique("ns-created")
	key := createWork(t, name, nil, cmManifest(t, ns, "cm", "v1"))
	waitForWork(t, key, reported)
	var got corev1.Namespace
	if err := env.Client.Get(t.Context(), types.NamespacedName{Name: ns}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Labels[worksync.CreatedNamespaceLabel] != worksync.FieldManager || got.Annotations[worksync.CreatedForWorkAnnotation] != name {
		t.Errorf("namespace labels %v annotations %v, want it marked as created by the agent for %s", got.Labels, got.Annotations, name)
	}

	w := &musterv1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if err := env.Client.Delete(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(env.Client.Get(ctx, key, w)), nil
	})
	if err != nil {
		t.Fatalf("Work %s still there: %v", key, err)
	}
	if err := env.Client.Get(t.Context(), types.NamespacedName{Name: ns}, &got); err != nil || got.DeletionTimestamp != nil {
		t.Errorf("namespace %s is gone or going with its Work (err %v, deletion %v); a next Work there would be refused", ns, err, got.DeletionTimestamp)
	}
	if err := env.Client.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "cm"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Work's ConfigMap is still there after the Work was deleted: %v", err)
	}
}
