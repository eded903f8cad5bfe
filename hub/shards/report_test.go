package shards_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/shards"
)

func applied(s metav1.ConditionStatus, msg string) []metav1.Condition {
	return []metav1.Condition{{Type: musterv1.WorkApplied, Status: s, Reason: "Test", Message: msg}}
}

func TestApplyState(t *testing.T) {
	one := musterv1.WorkSpec{Manifests: []musterv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{}`)}}}}
	status, _ := json.Marshal(map[string]int{"active": 1})
	tests := []struct {
		name        string
		status      musterv1.WorkStatus
		wantApplied bool
		wantFailure string
	}{
		{"not reported yet", musterv1.WorkStatus{}, false, ""},
		{"applied", musterv1.WorkStatus{Manifests: []musterv1.ManifestStatus{{Conditions: applied(metav1.ConditionTrue, "ok")}}}, true, ""},
		{"status fed back without conditions", musterv1.WorkStatus{Manifests: []musterv1.ManifestStatus{{Status: &runtime.RawExtension{Raw: status}}}}, true, ""},
		{"refused by the member", musterv1.WorkStatus{Manifests: []musterv1.ManifestStatus{{Conditions: applied(metav1.ConditionFalse, `Job.batch "w" is invalid: spec.template.spec.containers[0].name: Invalid value: "Bad_Name"`)}}},
			false, `Job.batch "w" is invalid: spec.template.spec.containers[0].name: Invalid value: "Bad_Name"`},
		{"the Work itself failed", musterv1.WorkStatus{Conditions: applied(metav1.ConditionFalse, "decoding manifest 0: bad JSON")}, false, "decoding manifest 0: bad JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, msg := shards.ApplyState(&musterv1.Work{Spec: one, Status: tc.status})
			if ok != tc.wantApplied || msg != tc.wantFailure {
				t.Errorf("ApplyState = %v, %q; want %v, %q", ok, msg, tc.wantApplied, tc.wantFailure)
			}
		})
	}
}

func TestJoin(t *testing.T) {
	many := make([]string, 100)
	for i := range many {
		many[i] = fmt.Sprintf("cluster member%02d: %s", i, strings.Repeat("x", 40))
	}
	msg, shown := shards.Join(many)
	if len(msg) > shards.MaxMessage || !strings.HasSuffix(msg, fmt.Sprintf("; and %d more", 100-shown)) || shown == 0 || !strings.HasPrefix(msg, many[0]+"; "+many[1]) {
		t.Errorf("100 entries: %d bytes, shown %d: %q", len(msg), shown, msg)
	}
	huge := "cluster m1: " + strings.Repeat("é", 2000)
	msg, shown = shards.Join([]string{huge, "cluster m2: quota"})
	if len(msg) > shards.MaxMessage || !utf8.ValidString(msg) || !strings.HasSuffix(msg, "…; and 1 more") || shown != 1 {
		t.Errorf("one huge entry: %d bytes, valid %v, shown %d, ends %q", len(msg), utf8.ValidString(msg), shown, msg[len(msg)-20:])
	}
	if msg, shown = shards.Join([]string{"a: x", "b: y"}); msg != "a: x; b: y" || shown != 2 {
		t.Errorf("short entries: %q, %d", msg, shown)
	}
}

func TestAppliedCondition(t *testing.T) {
	refused := []shards.Report{{Where: "cluster m1", ApplyError: "quota exceeded"}, {Where: "cluster m2", Applied: true}}
	failedPrev := &metav1.Condition{Type: "ShardsApplied", Status: metav1.ConditionFalse, Reason: musterv1.ReasonApplyFailed, Message: "cluster m1: quota exceeded"}
	tests := []struct {
		name       string
		prev       *metav1.Condition
		reports    []shards.Report
		wantStatus metav1.ConditionStatus
		wantReason string
		wantMsg    string
		wantNews   bool
	}{
		{"a refusal is news the first time", nil, refused, metav1.ConditionFalse, musterv1.ReasonApplyFailed, "cluster m1: quota exceeded", true},
		{"the same refusal again is not", failedPrev, refused, metav1.ConditionFalse, musterv1.ReasonApplyFailed, "cluster m1: quota exceeded", false},
		{"another cluster's refusal is", failedPrev, []shards.Report{refused[0], {Where: "cluster m2", ApplyError: "Bad_Name"}},
			metav1.ConditionFalse, musterv1.ReasonApplyFailed, "cluster m1: quota exceeded; cluster m2: Bad_Name", true},
		{"a changed message is", failedPrev, []shards.Report{{Where: "cluster m1", ApplyError: "quota exceeded: pods=3"}},
			metav1.ConditionFalse, musterv1.ReasonApplyFailed, "cluster m1: quota exceeded: pods=3", true},
		{"waiting for an agent", nil, []shards.Report{{Where: "cluster m1", Applied: true}, {Where: "cluster m2"}},
			metav1.ConditionUnknown, musterv1.ReasonApplying, "waiting for the agent to apply the shard in cluster m2", false},
		{"cleared once every shard applied", failedPrev, []shards.Report{{Where: "cluster m1", Applied: true}, {Where: "cluster m2", Applied: true}},
			metav1.ConditionTrue, musterv1.ReasonApplied, "the member clusters applied every shard (2)", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, news := shards.AppliedCondition("ShardsApplied", tc.prev, tc.reports, 3)
			if c.Type != "ShardsApplied" || c.Status != tc.wantStatus || c.Reason != tc.wantReason || c.Message != tc.wantMsg || c.ObservedGeneration != 3 || news != tc.wantNews {
				t.Errorf("got %+v news=%v; want %s %s %q news=%v", c, news, tc.wantStatus, tc.wantReason, tc.wantMsg, tc.wantNews)
			}
		})
	}
}

func TestAppliedConditionCappedIsNewsOnce(t *testing.T) {
	var reports []shards.Report
	for i := range 60 {
		reports = append(reports, shards.Report{Where: fmt.Sprintf("cluster member%02d", i), ApplyError: strings.Repeat("refused ", 10)})
	}
	c, news := shards.AppliedCondition("ShardsApplied", nil, reports, 1)
	if !news || len(c.Message) > shards.MaxMessage || !strings.Contains(c.Message, "more") {
		t.Fatalf("first: news=%v, %d bytes: %q", news, len(c.Message), c.Message)
	}
	if _, news := shards.AppliedCondition("ShardsApplied", &c, reports, 1); news {
		t.Error("the same 60 refusals were news again")
	}
}

func TestSchedulableCondition(t *testing.T) {
	wait1 := []shards.Report{{Where: "cluster m1", Unschedulable: "2 pods cannot be scheduled: 0/4 nodes are available: 4 Insufficient cpu."}, {Where: "cluster m2"}}
	prevFalse := &metav1.Condition{Type: "PodsSchedulable", Status: metav1.ConditionFalse, Reason: musterv1.ReasonUnschedulable, Message: "cluster m1: 1 pods cannot be scheduled: 0/4 nodes are available"}
	tests := []struct {
		name       string
		prev       *metav1.Condition
		reports    []shards.Report
		wantStatus metav1.ConditionStatus
		wantMsg    string
		wantNews   bool
	}{
		{"no pod ever waited: no condition", nil, []shards.Report{{Where: "cluster m1"}}, "", "", false},
		{"pods wait: False, news", nil, wait1, metav1.ConditionFalse, "cluster m1: " + wait1[0].Unschedulable, true},
		{"the same cluster with other counts: not news", prevFalse, wait1, metav1.ConditionFalse, "cluster m1: " + wait1[0].Unschedulable, false},
		{"another cluster starts waiting: news", prevFalse, []shards.Report{wait1[0], {Where: "cluster m2", Unschedulable: "1 pods cannot be scheduled: taint"}},
			metav1.ConditionFalse, "cluster m1: " + wait1[0].Unschedulable + "; cluster m2: 1 pods cannot be scheduled: taint", true},
		{"cleared", prevFalse, []shards.Report{{Where: "cluster m1"}}, metav1.ConditionTrue, "no pod waits for a node", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, news := shards.SchedulableCondition("PodsSchedulable", tc.prev, tc.reports, 1)
			if tc.wantStatus == "" {
				if c != nil || news {
					t.Errorf("got %+v news=%v, want none", c, news)
				}
				return
			}
			if c == nil || c.Status != tc.wantStatus || c.Message != tc.wantMsg || news != tc.wantNews {
				t.Errorf("got %+v news=%v; want %s %q news=%v", c, news, tc.wantStatus, tc.wantMsg, tc.wantNews)
			}
		})
	}
}
