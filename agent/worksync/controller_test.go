package worksync_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/agent/worksync"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/envtest"
)

var seq atomic.Int32

// unique names a test's objects so that repeated runs (-count) in one API server do not
// collide.
func unique(base string) string { return fmt.Sprintf("%s-%d", base, seq.Add(1)) }

func cmManifest(t *testing.T, ns, name, value string) musterv1.Manifest {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"data":     map[string]any{"key": value},
	})
	if err != nil {
		t.Fatal(err)
	}
	return musterv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
}

func createWork(t *testing.T, name string, mutate func(*musterv1.Work), manifests ...musterv1.Manifest) types.NamespacedName {
	t.Helper()
	w := &musterv1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: musterv1.MemberNamespace(clusterName), Name: name}}
	w.Spec.Manifests = manifests
	if mutate != nil {
		mutate(w)
	}
	if err := env.Client.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	return types.NamespacedName{Namespace: w.Namespace, Name: w.Name}
}

func waitForWork(t *testing.T, key types.NamespacedName, cond func(*musterv1.Work) bool) *musterv1.Work {
	t.Helper()
	var w musterv1.Work
	envtest.Eventually(t, "Work "+key.String(), func() (bool, string) {
		if err := env.Client.Get(t.Context(), key, &w); err != nil {
			return false, err.Error()
		}
		return cond(&w), fmt.Sprintf("status %+v", w.Status)
	})
	return &w
}

func reported(w *musterv1.Work) bool {
	return w.Status.ObservedGeneration == w.Generation && len(w.Status.Manifests) == len(w.Spec.Manifests)
}

func TestAppliesIntoAMissingNamespaceAndLabelsTheObject(t *testing.T) {
	name, ns := unique("fresh"), unique("created-by-work")
	key := createWork(t, name, nil, cmManifest(t, ns, "cm", "v1"))
	w := waitForWork(t, key, reported)
	if !meta.IsStatusConditionTrue(w.Status.Conditions, musterv1.WorkApplied) {
		t.Fatalf("conditions %+v", w.Status.Conditions)
	}
	var cm corev1.ConfigMap
	if err := env.Client.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "cm"}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Labels[worksync.WorkLabel] != name || cm.Data["key"] != "v1" {
		t.Errorf("ConfigMap labels %v data %v", cm.Labels, cm.Data)
	}
	if !slices.Contains(w.Finalizers, worksync.Finalizer) {
		t.Errorf("finalizers %v, want %s", w.Finalizers, worksync.Finalizer)
	}
}

func TestUpdatedManifestIsReappliedAndDroppedOneDeleted(t *testing.T) {
	ns, keepName, dropName := "default", unique("keep"), unique("drop")
	key := createWork(t, unique("changing"), nil, cmManifest(t, ns, keepName, "v1"), cmManifest(t, ns, dropName, "v1"))
	waitForWork(t, key, reported)
	var w musterv1.Work
	if err := env.Client.Get(t.Context(), key, &w); err != nil {
		t.Fatal(err)
	}
	w.Spec.Manifests = []musterv1.Manifest{cmManifest(t, ns, keepName, "v2")}
	if err := env.Client.Update(t.Context(), &w); err != nil {
		t.Fatal(err)
	}
	waitForWork(t, key, reported)
	envtest.Eventually(t, "keep=v2 and drop deleted", func() (bool, string) {
		var keep corev1.ConfigMap
		keepErr := env.Client.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: keepName}, &keep)
		dropErr := env.Client.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: dropName}, &corev1.ConfigMap{})
		return keepErr == nil && keep.Data["key"] == "v2" && apierrors.IsNotFound(dropErr),
			fmt.Sprintf("keep %v (%v), drop: %v", keep.Data, keepErr, dropErr)
	})
}

// A field another manager owns is reported as a conflict, and taken over only when the
// Work says so.
func TestConflictsAreReportedUnlessForced(t *testing.T) {
	ctx := t.Context()
	contested := unique("contested")
	theirs := corev1ac.ConfigMap(contested, "default").WithData(map[string]string{"key": "theirs"})
	if err := env.Client.Apply(ctx, theirs, client.FieldOwner("someone-else")); err != nil {
		t.Fatal(err)
	}
	key := createWork(t, unique("contest"), nil, cmManifest(t, "default", contested, "ours"))
	w := waitForWork(t, key, reported)
	c := meta.FindStatusCondition(w.Status.Manifests[0].Conditions, musterv1.WorkApplied)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != musterv1.WorkReasonFieldManagerConflict {
		t.Fatalf("Applied = %+v, want False/%s", c, musterv1.WorkReasonFieldManagerConflict)
	}
	w.Spec.ApplyOption = &musterv1.ApplyOption{ForceConflicts: true}
	if err := env.Client.Update(ctx, w); err != nil {
		t.Fatal(err)
	}
	waitForWork(t, key, func(w *musterv1.Work) bool {
		return reported(w) && meta.IsStatusConditionTrue(w.Status.Manifests[0].Conditions, musterv1.WorkApplied)
	})
	var cm corev1.ConfigMap
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: contested}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["key"] != "ours" {
		t.Errorf("forced apply left data %v", cm.Data)
	}
}

func TestJSONPathFeedback(t *testing.T) {
	pathed := unique("pathed")
	key := createWork(t, unique("paths"), func(w *musterv1.Work) {
		w.Spec.FeedbackRules = []musterv1.FeedbackRule{{
			Resource:  musterv1.ResourceIdentifier{Kind: "ConfigMap", Namespace: "default", Name: pathed},
			Mode:      musterv1.FeedbackJSONPaths,
			JSONPaths: []musterv1.JSONPathRule{{Name: "value", Path: ".data.key"}},
		}}
	}, cmManifest(t, "default", pathed, "hello"))
	w := waitForWork(t, key, reported)
	values := w.Status.Manifests[0].Values
	if len(values) != 1 || string(values[0].Value.Raw) != `"hello"` {
		t.Errorf("feedback values %+v, want value=\"hello\"", values)
	}
}

func TestDeletionWaitsForMemberObjects(t *testing.T) {
	ctx := t.Context()
	going := unique("going")
	key := createWork(t, going, nil, cmManifest(t, "default", going, "v1"))
	w := waitForWork(t, key, reported)
	if err := env.Client.Delete(ctx, w); err != nil {
		t.Fatal(err)
	}
	envtest.Eventually(t, "the ConfigMap and then the Work gone", func() (bool, string) {
		cmErr := env.Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: going}, &corev1.ConfigMap{})
		wErr := env.Client.Get(ctx, key, &musterv1.Work{})
		return apierrors.IsNotFound(cmErr) && apierrors.IsNotFound(wErr), fmt.Sprintf("ConfigMap: %v, Work: %v", cmErr, wErr)
	})
}

// steady checks that the Work is at rest: a change of its spec that changes nothing to
// apply (an explicit empty applyOption) is observed by the syncer (observedGeneration),
// and by then the member object has not been written again nor the Work's report changed:
// nothing re-applies or rewrites them each time the syncer looks.
func steady(t *testing.T, obj types.NamespacedName, key types.NamespacedName) {
	t.Helper()
	var cm corev1.ConfigMap
	if err := env.Client.Get(t.Context(), obj, &cm); err != nil {
		t.Fatal(err)
	}
	var w musterv1.Work
	if err := env.Client.Get(t.Context(), key, &w); err != nil {
		t.Fatal(err)
	}
	before, generation := w.Status.DeepCopy(), w.Generation
	patch := client.MergeFrom(w.DeepCopy())
	w.Spec.ApplyOption = &musterv1.ApplyOption{}
	if err := env.Client.Patch(t.Context(), &w, patch); err != nil {
		t.Fatal(err)
	}
	if w.Generation == generation {
		t.Fatalf("the spec change left the Work at generation %d: nothing for the syncer to observe", generation)
	}
	after := waitForWork(t, key, func(got *musterv1.Work) bool { return got.Generation == w.Generation && reported(got) })
	var cm1 corev1.ConfigMap
	if err := env.Client.Get(t.Context(), obj, &cm1); err != nil {
		t.Fatal(err)
	}
	if cm1.ResourceVersion != cm.ResourceVersion {
		t.Errorf("the ConfigMap was written again (resourceVersion %s -> %s) by a look that had nothing to apply", cm.ResourceVersion, cm1.ResourceVersion)
	}
	if diff := cmp.Diff(before, &after.Status, ignoreGenerations); diff != "" {
		t.Errorf("the Work's report changed when nothing did (-before +after):\n%s", diff)
	}
}

// ignoreGenerations leaves out of a comparison of Work statuses the generations they
// were written for.
var ignoreGenerations = cmp.Options{
	cmpopts.IgnoreFields(musterv1.WorkStatus{}, "ObservedGeneration"),
	cmpopts.IgnoreFields(musterv1.ManifestStatus{}, "ObservedGeneration"),
	cmpopts.IgnoreFields(metav1.Condition{}, "ObservedGeneration"),
}

// A Work admitted without the webhook that lists one object twice must not have the agent
// apply the two against each other forever: the first is applied, the second reported.
func TestASecondManifestForOneObjectIsReportedNotApplied(t *testing.T) {
	name, twice := unique("twice"), unique("twice-cm")
	key := createWork(t, name, nil,
		cmManifest(t, "default", twice, "first"), cmManifest(t, "default", unique("other"), "x"), cmManifest(t, "default", twice, "second"))
	w := waitForWork(t, key, func(w *musterv1.Work) bool {
		return reported(w) && meta.FindStatusCondition(w.Status.Manifests[2].Conditions, musterv1.WorkApplied) != nil
	})
	first := meta.FindStatusCondition(w.Status.Manifests[0].Conditions, musterv1.WorkApplied)
	second := meta.FindStatusCondition(w.Status.Manifests[2].Conditions, musterv1.WorkApplied)
	wantMsg := fmt.Sprintf("manifest 2 names the same object as manifest 0 (ConfigMap default/%s): only manifest 0 is applied; remove one of them", twice)
	if first.Status != metav1.ConditionTrue || second.Status != metav1.ConditionFalse || second.Reason != musterv1.WorkReasonDuplicateManifest || second.Message != wantMsg {
		t.Errorf("manifest 0 Applied = %+v\nmanifest 2 Applied = %+v, want False/%s %q", first, second, musterv1.WorkReasonDuplicateManifest, wantMsg)
	}
	if c := meta.FindStatusCondition(w.Status.Conditions, musterv1.WorkApplied); c == nil || c.Status != metav1.ConditionFalse || c.Message != "1 of 3 manifests failed to apply" {
		t.Errorf("Work Applied = %+v, want False: 1 of 3 manifests failed to apply", c)
	}
	obj := types.NamespacedName{Namespace: "default", Name: twice}
	steady(t, obj, key)
	var cm corev1.ConfigMap
	if err := env.Client.Get(t.Context(), obj, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["key"] != "first" {
		t.Errorf("ConfigMap data %v, want the first manifest's", cm.Data)
	}
}

// A feedback path that does not parse is reported on its manifest; the object is still
// applied and the paths that parse still come back.
func TestAJSONPathThatDoesNotParseIsReported(t *testing.T) {
	pathed := unique("badpath")
	key := createWork(t, unique("badpaths"), func(w *musterv1.Work) {
		w.Spec.FeedbackRules = []musterv1.FeedbackRule{{
			Resource:  musterv1.ResourceIdentifier{Kind: "ConfigMap", Namespace: "default", Name: pathed},
			Mode:      musterv1.FeedbackJSONPaths,
			JSONPaths: []musterv1.JSONPathRule{{Name: "broken", Path: "{.data[}"}, {Name: "value", Path: ".data.key"}},
		}}
	}, cmManifest(t, "default", pathed, "hello"))
	w := waitForWork(t, key, reported)
	m := w.Status.Manifests[0]
	fb := meta.FindStatusCondition(m.Conditions, worksync.ConditionFeedbackSynced)
	want := `jsonPaths[0] (broken) "{.data[}": not a JSONPath: unterminated array`
	if fb == nil || fb.Status != metav1.ConditionFalse || fb.Reason != musterv1.WorkReasonInvalidJSONPath || fb.Message != want {
		t.Errorf("StatusFeedbackSynced = %+v, want False/%s %q", fb, musterv1.WorkReasonInvalidJSONPath, want)
	}
	if !meta.IsStatusConditionTrue(m.Conditions, musterv1.WorkApplied) {
		t.Errorf("Applied = %+v, want True: the object was applied", meta.FindStatusCondition(m.Conditions, musterv1.WorkApplied))
	}
	if len(m.Values) != 1 || m.Values[0].Name != "value" || string(m.Values[0].Value.Raw) != `"hello"` {
		t.Errorf("values %+v, want value=\"hello\"", m.Values)
	}
	steady(t, types.NamespacedName{Namespace: "default", Name: pathed}, key)
}
