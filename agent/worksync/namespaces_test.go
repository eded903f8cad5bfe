package worksync_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/musterhq/muster/agent/worksync"
	"github.com/musterhq/muster/api/podsecurity"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/envtest"
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

// podSecurity is the value of the Work annotation for an enforce level, with more labels.
func podSecurity(enforce string, more ...string) func(*musterv1.Work) {
	return func(w *musterv1.Work) {
		value := strings.Join(append([]string{"pod-security.kubernetes.io/enforce=" + enforce, "pod-security.kubernetes.io/enforce-version=latest"}, more...), ",")
		metav1.SetMetaDataAnnotation(&w.ObjectMeta, podsecurity.WorkAnnotation, value)
	}
}

// podSecurityLabels returns the Pod Security labels of a member namespace.
func podSecurityLabels(t *testing.T, name string) map[string]string {
	t.Helper()
	var ns corev1.Namespace
	if err := env.Client.Get(t.Context(), types.NamespacedName{Name: name}, &ns); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range ns.Labels {
		if strings.HasPrefix(k, "pod-security.kubernetes.io/") {
			out[k] = v
		}
	}
	return out
}

// A namespace the agent creates gets the Pod Security labels of the Work's hub namespace,
// so the member's own admission holds its pods to the level the hub checked; it follows the
// labels of the next Work the hub writes, and an older Work applied again does not take
// them back.
func TestCreatedNamespaceCarriesAndFollowsThePodSecurityLabels(t *testing.T) {
	ns := unique("ns-level")
	first := createWork(t, unique("level-first"), podSecurity("restricted"), cmManifest(t, ns, "first", "v1"))
	waitForWork(t, first, reported)
	want := map[string]string{"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest"}
	if diff := cmp.Diff(want, podSecurityLabels(t, ns)); diff != "" {
		t.Errorf("labels of the created namespace (-want +got):\n%s", diff)
	}

	// The hub namespace's labels changed; the hub writes them on the next Work.
	second := createWork(t, unique("level-second"), podSecurity("baseline", "pod-security.kubernetes.io/warn=restricted", "pod-security.kubernetes.io/warn-version=v1.36"),
		cmManifest(t, ns, "second", "v1"))
	waitForWork(t, second, reported)
	want = map[string]string{
		"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/enforce-version": "latest",
		"pod-security.kubernetes.io/warn": "restricted", "pod-security.kubernetes.io/warn-version": "v1.36",
	}
	if diff := cmp.Diff(want, podSecurityLabels(t, ns)); diff != "" {
		t.Errorf("labels after a Work with new ones (-want +got):\n%s", diff)
	}

	// The first Work is applied again (its ConfigMap went), unchanged: the labels stay the
	// newer Work's.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "first"}}
	if err := env.Client.Delete(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	envtest.Eventually(t, "the first Work's ConfigMap applied again", func() (bool, string) {
		err := env.Client.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "first"}, cm)
		return err == nil, fmt.Sprint(err)
	})
	if diff := cmp.Diff(want, podSecurityLabels(t, ns)); diff != "" {
		t.Errorf("labels after the older Work was applied again (-want +got):\n%s", diff)
	}
}

// The agent never changes the labels of a namespace it did not create: they are the
// member admin's.
func TestExistingNamespaceKeepsItsLabels(t *testing.T) {
	ns := unique("ns-admins")
	labels := map[string]string{"pod-security.kubernetes.io/enforce": "privileged", "team": "infra"}
	if err := env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}); err != nil {
		t.Fatal(err)
	}
	key := createWork(t, unique("level-existing"), podSecurity("restricted"), cmManifest(t, ns, "cm", "v1"))
	waitForWork(t, key, reported)
	var got corev1.Namespace
	if err := env.Client.Get(t.Context(), types.NamespacedName{Name: ns}, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(labels, got.Labels, cmpopts.IgnoreMapEntries(func(k, _ string) bool { return k == corev1.LabelMetadataName })); diff != "" {
		t.Errorf("labels of the member admin's namespace (-want +got):\n%s", diff)
	}
}

// An annotation that would set other labels is not obeyed: the namespaced manifest is not
// applied, and says why.
func TestAnnotationWithOtherLabelsIsRefused(t *testing.T) {
	ns := unique("ns-forged")
	key := createWork(t, unique("level-forged"), podSecurity("restricted", "muster.dev/created-by=someone"), cmManifest(t, ns, "cm", "v1"))
	w := waitForWork(t, key, reported)
	c := meta.FindStatusCondition(w.Status.Manifests[0].Conditions, musterv1.WorkApplied)
	if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "annotation muster.dev/pod-security: label muster.dev/created-by") {
		t.Fatalf("manifest conditions %+v, want Applied=False naming the label", w.Status.Manifests[0].Conditions)
	}
	if err := env.Client.Get(t.Context(), types.NamespacedName{Name: ns}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s: %v, want it not created", ns, err)
	}
}
