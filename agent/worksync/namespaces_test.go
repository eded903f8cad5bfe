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

// namespaceTimeout bounds how long a Work takes to apply or to be released.
const namespaceTimeout = 15 * time.Second

// deleteWorkAndWait deletes a Work and waits until the agent let it go, which it does only
// after deciding about the namespaces it used.
func deleteWorkAndWait(t *testing.T, key types.NamespacedName) {
	t.Helper()
	w := &musterv1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if err := env.Client.Delete(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, namespaceTimeout, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, key, w)
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("Work %s still there: %v", key, err)
	}
}

// namespaceDeleted tells whether a namespace is gone or going (envtest runs no namespace
// controller, so a deleted namespace stays Terminating there).
func namespaceDeleted(t *testing.T, name string) bool {
	t.Helper()
	var ns corev1.Namespace
	err := env.Client.Get(t.Context(), types.NamespacedName{Name: name}, &ns)
	if apierrors.IsNotFound(err) {
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return ns.DeletionTimestamp != nil
}

func TestCreatedNamespaceIsMarkedAndDeletedWithItsWork(t *testing.T) {
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
	deleteWorkAndWait(t, key)
	if !namespaceDeleted(t, ns) {
		t.Errorf("namespace %s the agent created for the deleted Work %s is still there", ns, name)
	}
}

func TestCreatedNamespaceStaysWhileAnotherWorkNeedsIt(t *testing.T) {
	ns := unique("ns-shared")
	first := createWork(t, unique("ns-first"), nil, cmManifest(t, ns, "a", "v1"))
	waitForWork(t, first, reported)
	second := createWork(t, unique("ns-second"), nil, cmManifest(t, ns, "b", "v1"))
	waitForWork(t, second, reported)
	deleteWorkAndWait(t, first)
	if namespaceDeleted(t, ns) {
		t.Fatalf("namespace %s deleted while Work %s still has a manifest in it", ns, second.Name)
	}
	deleteWorkAndWait(t, second)
	if !namespaceDeleted(t, ns) {
		t.Errorf("namespace %s still there after the last Work that needed it was deleted", ns)
	}
}

func TestNamespaceThatExistedIsNeverDeleted(t *testing.T) {
	ns := unique("ns-users")
	if err := env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	key := createWork(t, unique("ns-guest"), nil, cmManifest(t, ns, "cm", "v1"))
	waitForWork(t, key, reported)
	deleteWorkAndWait(t, key)
	if namespaceDeleted(t, ns) {
		t.Errorf("namespace %s, which existed before the Work, was deleted with it", ns)
	}
}

func TestCreatedNamespaceWithTheUsersObjectsStays(t *testing.T) {
	ns := unique("ns-adopted")
	key := createWork(t, unique("ns-maker"), nil, cmManifest(t, ns, "cm", "v1"))
	waitForWork(t, key, reported)
	mine := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine"}}
	if err := env.Client.Create(t.Context(), mine); err != nil {
		t.Fatal(err)
	}
	deleteWorkAndWait(t, key)
	if namespaceDeleted(t, ns) {
		t.Errorf("namespace %s deleted although the user's ConfigMap %s lives in it", ns, mine.Name)
	}
}

func TestCreatedNamespaceOfAnOrphaningWorkStays(t *testing.T) {
	ns := unique("ns-orphans")
	orphan := func(w *musterv1.Work) {
		w.Spec.DeleteOption = &musterv1.DeleteOption{PropagationPolicy: musterv1.DeletePropagationOrphan}
	}
	key := createWork(t, unique("ns-orphaner"), orphan, cmManifest(t, ns, "cm", "v1"))
	waitForWork(t, key, reported)
	deleteWorkAndWait(t, key)
	if namespaceDeleted(t, ns) {
		t.Errorf("namespace %s deleted although the Work orphaned its ConfigMap there", ns)
	}
	// A later Work in the same namespace goes without taking the orphan's home with it.
	later := createWork(t, unique("ns-later"), nil, cmManifest(t, ns, "other", "v1"))
	waitForWork(t, later, reported)
	deleteWorkAndWait(t, later)
	if namespaceDeleted(t, ns) {
		t.Errorf("namespace %s deleted although an orphaned ConfigMap lives in it", ns)
	}
}
