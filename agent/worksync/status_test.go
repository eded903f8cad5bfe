package worksync

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func raw(s string) musterv1.Manifest {
	return musterv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(s)}}
}

func TestDecodeManifests(t *testing.T) {
	work := &musterv1.Work{Spec: musterv1.WorkSpec{Manifests: []musterv1.Manifest{
		raw(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"x"}}`),
		raw(`not json`),
		raw(`{"kind":"ConfigMap","metadata":{"name":"b"}}`),
		raw(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}`),
	}}}
	got := decodeManifests(work)
	if len(got) != 4 {
		t.Fatalf("decoded %d manifests, want 4", len(got))
	}
	if got[0].err != nil || got[0].object.GetName() != "a" {
		t.Errorf("manifest 0: %+v", got[0])
	}
	for i, want := range map[int]string{1: "not a JSON object", 2: "no apiVersion or kind", 3: "no metadata.name"} {
		if got[i].err == nil || !strings.Contains(got[i].err.Error(), want) || got[i].ordinal != i {
			t.Errorf("manifest %d: error %v, want one containing %q", i, got[i].err, want)
		}
	}
}

func TestApplyOrderPutsNamespacesAndCRDsFirst(t *testing.T) {
	obj := func(group, kind, name string) manifest {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v1", Kind: kind})
		u.SetName(name)
		return manifest{object: u}
	}
	in := []manifest{
		obj("", "ConfigMap", "cm"),
		obj("example.com", "Widget", "w"),
		obj("apiextensions.k8s.io", "CustomResourceDefinition", "widgets.example.com"),
		obj("", "Namespace", "ns"),
		obj("batch", "Job", "j"),
	}
	var got []string
	for _, m := range applyOrder(in) {
		got = append(got, m.object.GetName())
	}
	if diff := cmp.Diff([]string{"ns", "widgets.example.com", "cm", "w", "j"}, got); diff != "" {
		t.Errorf("apply order (-want +got):\n%s", diff)
	}
}

func jobObject(status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"name": "j", "namespace": "default", "generation": int64(3)},
		"status":   status,
	}}
	return u
}

func TestManifestStatus(t *testing.T) {
	id := musterv1.ResourceIdentifier{Group: "batch", Version: "v1", Kind: "Job", Namespace: "default", Name: "j"}
	conflict := apierrors.NewConflict(schema.GroupResource{Group: "batch", Resource: "jobs"}, "j", errors.New("field owned by kubectl"))
	cases := []struct {
		name          string
		outcome       outcome
		rule          *musterv1.FeedbackRule
		wantApplied   metav1.ConditionStatus
		wantReason    string
		wantStatus    string
		wantValues    int
		wantGenerated int64
		// wantFeedback is the StatusFeedbackSynced condition as "Status/Reason: message",
		// "" when there is none.
		wantFeedback string
	}{
		{
			name:        "applied, whole status fed back",
			outcome:     outcome{id: id, object: jobObject(map[string]any{"succeeded": int64(1)})},
			wantApplied: metav1.ConditionTrue, wantReason: musterv1.ReasonApplied, wantStatus: `{"succeeded":1}`, wantGenerated: 3,
		},
		{
			name:        "conflict with another field manager",
			outcome:     outcome{id: id, err: conflict},
			wantApplied: metav1.ConditionFalse, wantReason: musterv1.WorkReasonFieldManagerConflict,
		},
		{
			name:        "invalid manifest",
			outcome:     outcome{id: id, err: invalidManifest{errors.New("no kind")}},
			wantApplied: metav1.ConditionFalse, wantReason: musterv1.WorkReasonInvalidManifest,
		},
		{
			name:        "feedback switched off",
			outcome:     outcome{id: id, object: jobObject(map[string]any{"succeeded": int64(1)})},
			rule:        &musterv1.FeedbackRule{Mode: musterv1.FeedbackNone},
			wantApplied: metav1.ConditionTrue, wantReason: musterv1.ReasonApplied, wantGenerated: 3,
		},
		{
			name:    "JSONPaths feedback",
			outcome: outcome{id: id, object: jobObject(map[string]any{"succeeded": int64(4), "active": int64(2)})},
			rule: &musterv1.FeedbackRule{Mode: musterv1.FeedbackJSONPaths, JSONPaths: []musterv1.JSONPathRule{
				{Name: "succeeded", Path: ".status.succeeded"}, {Name: "missing", Path: ".status.nothing"},
			}},
			wantApplied: metav1.ConditionTrue, wantReason: musterv1.ReasonApplied, wantValues: 1, wantGenerated: 3,
			wantFeedback: "True/StatusFeedbackSynced: every JSONPath parses",
		},
		{
			name:    "a JSONPath that does not parse is reported, the others still come back",
			outcome: outcome{id: id, object: jobObject(map[string]any{"succeeded": int64(4)})},
			rule: &musterv1.FeedbackRule{Mode: musterv1.FeedbackJSONPaths, JSONPaths: []musterv1.JSONPathRule{
				{Name: "broken", Path: "{.data[}"}, {Name: "succeeded", Path: ".status.succeeded"},
			}},
			wantApplied: metav1.ConditionTrue, wantReason: musterv1.ReasonApplied, wantValues: 1, wantGenerated: 3,
			wantFeedback: `False/InvalidJSONPath: jsonPaths[0] (broken) "{.data[}": not a JSONPath: unterminated array`,
		},
		{
			name:        "a second manifest for one object",
			outcome:     outcome{ordinal: 2, id: id, err: duplicateManifest{ordinal: 2, first: 0, id: id}},
			wantApplied: metav1.ConditionFalse, wantReason: musterv1.WorkReasonDuplicateManifest,
		},
		{
			name:        "oversized status is replaced by a note",
			outcome:     outcome{id: id, object: jobObject(map[string]any{"blob": strings.Repeat("x", MaxFeedbackBytes)})},
			wantApplied: metav1.ConditionTrue, wantReason: musterv1.ReasonApplied, wantGenerated: 3,
			wantStatus: `{"message":"the status is larger than 16384 bytes; use JSONPaths feedback","reason":"StatusTooLarge"}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := manifestStatus(tc.outcome, tc.rule, nil, 1)
			c := meta.FindStatusCondition(got.Conditions, musterv1.WorkApplied)
			if c == nil || c.Status != tc.wantApplied || c.Reason != tc.wantReason {
				t.Errorf("Applied = %+v, want %s/%s", c, tc.wantApplied, tc.wantReason)
			}
			gotStatus := ""
			if got.Status != nil {
				gotStatus = string(got.Status.Raw)
			}
			if gotStatus != tc.wantStatus {
				t.Errorf("status feedback = %s, want %s", gotStatus, tc.wantStatus)
			}
			if len(got.Values) != tc.wantValues {
				t.Errorf("values = %+v, want %d", got.Values, tc.wantValues)
			}
			if got.ObservedGeneration != tc.wantGenerated {
				t.Errorf("observedGeneration = %d, want %d", got.ObservedGeneration, tc.wantGenerated)
			}
			gotFeedback := ""
			if c := meta.FindStatusCondition(got.Conditions, ConditionFeedbackSynced); c != nil {
				gotFeedback = fmt.Sprintf("%s/%s: %s", c.Status, c.Reason, c.Message)
			}
			if gotFeedback != tc.wantFeedback {
				t.Errorf("StatusFeedbackSynced = %q, want %q", gotFeedback, tc.wantFeedback)
			}
		})
	}
}

func TestJSONPathValueIsJSON(t *testing.T) {
	values, _ := jsonPathValues(jobObject(map[string]any{"succeeded": int64(4)}), []musterv1.JSONPathRule{{Name: "s", Path: ".status.succeeded"}})
	var n int
	if len(values) != 1 || json.Unmarshal(values[0].Value.Raw, &n) != nil || n != 4 {
		t.Errorf("values = %+v, want s=4", values)
	}
}

func TestDuplicateManifestMessageNamesTheFirst(t *testing.T) {
	err := duplicateManifest{ordinal: 3, first: 1, id: musterv1.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "web", Name: "api"}}
	want := "manifest 3 names the same object as manifest 1 (apps/Deployment web/api): only manifest 1 is applied; remove one of them"
	if err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
}

func TestFeedbackConditionGoesWhenTheRuleDoes(t *testing.T) {
	id := musterv1.ResourceIdentifier{Group: "batch", Version: "v1", Kind: "Job", Namespace: "default", Name: "j"}
	o := outcome{id: id, object: jobObject(nil)}
	bad := &musterv1.FeedbackRule{Mode: musterv1.FeedbackJSONPaths, JSONPaths: []musterv1.JSONPathRule{{Name: "b", Path: ".x["}}}
	first := manifestStatus(o, bad, nil, 1)
	if !meta.IsStatusConditionFalse(first.Conditions, ConditionFeedbackSynced) {
		t.Fatalf("conditions %+v, want StatusFeedbackSynced=False", first.Conditions)
	}
	if again := manifestStatus(o, nil, &first, 2); meta.FindStatusCondition(again.Conditions, ConditionFeedbackSynced) != nil {
		t.Errorf("the rule was removed but its condition stayed: %+v", again.Conditions)
	}
}

func TestManifestStatusKeepsTransitionTimes(t *testing.T) {
	id := musterv1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Name: "c"}
	first := manifestStatus(outcome{id: id, object: jobObject(nil)}, nil, nil, 1)
	old := metav1.NewTime(first.Conditions[0].LastTransitionTime.Add(-3600e9))
	first.Conditions[0].LastTransitionTime = old
	again := manifestStatus(outcome{id: id, object: jobObject(nil)}, nil, &first, 1)
	if !again.Conditions[0].LastTransitionTime.Equal(&old) {
		t.Errorf("an unchanged condition got a new transition time: %v, want %v", again.Conditions[0].LastTransitionTime, old)
	}
}

func TestWorkConditions(t *testing.T) {
	ok := manifestStatus(outcome{object: jobObject(nil)}, nil, nil, 1)
	failed := manifestStatus(outcome{err: errors.New("boom")}, nil, nil, 1)
	cases := []struct {
		name                       string
		manifests                  []musterv1.ManifestStatus
		wantApplied, wantAvailable metav1.ConditionStatus
	}{
		{name: "all applied", manifests: []musterv1.ManifestStatus{ok, ok}, wantApplied: metav1.ConditionTrue, wantAvailable: metav1.ConditionTrue},
		{name: "one failed", manifests: []musterv1.ManifestStatus{ok, failed}, wantApplied: metav1.ConditionFalse, wantAvailable: metav1.ConditionFalse},
		{name: "empty Work", wantApplied: metav1.ConditionTrue, wantAvailable: metav1.ConditionTrue},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conds := workConditions(nil, tc.manifests, 1)
			if s := meta.FindStatusCondition(conds, musterv1.WorkApplied).Status; s != tc.wantApplied {
				t.Errorf("Applied = %s, want %s", s, tc.wantApplied)
			}
			if s := meta.FindStatusCondition(conds, musterv1.WorkAvailable).Status; s != tc.wantAvailable {
				t.Errorf("Available = %s, want %s", s, tc.wantAvailable)
			}
		})
	}
}

func TestDuplicates(t *testing.T) {
	obj := func(ordinal int, apiVersion, kind, ns, name string) manifest {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetNamespace(ns)
		u.SetName(name)
		return manifest{ordinal: ordinal, object: u}
	}
	cases := []struct {
		name string
		in   []manifest
		want map[int]int
	}{
		{"distinct", []manifest{obj(0, "v1", "ConfigMap", "a", "x"), obj(1, "v1", "ConfigMap", "b", "x"), obj(2, "v1", "Secret", "a", "x")}, map[int]int{}},
		{"same object twice", []manifest{obj(0, "v1", "ConfigMap", "a", "x"), obj(1, "v1", "ConfigMap", "a", "x")}, map[int]int{1: 0}},
		{"every later copy names the first", []manifest{obj(0, "v1", "ConfigMap", "a", "x"), obj(1, "v1", "Secret", "a", "x"), obj(2, "v1", "ConfigMap", "a", "x"), obj(3, "v1", "ConfigMap", "a", "x")}, map[int]int{2: 0, 3: 0}},
		{"another version is the same object", []manifest{obj(0, "apps/v1", "Deployment", "a", "x"), obj(1, "apps/v1beta1", "Deployment", "a", "x")}, map[int]int{1: 0}},
		{"no namespace is the default one", []manifest{obj(0, "v1", "ConfigMap", "", "x"), obj(1, "v1", "ConfigMap", "default", "x")}, map[int]int{1: 0}},
		{"undecodable manifests are skipped", []manifest{{ordinal: 0, err: errors.New("bad")}, {ordinal: 1, err: errors.New("bad")}}, map[int]int{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, duplicates(tc.in)); diff != "" {
				t.Errorf("duplicates (-want +got):\n%s", diff)
			}
		})
	}
}
