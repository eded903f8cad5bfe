package agent_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/musterhq/muster/agent"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// TestCacheOptionsHoldOnlyOwnedPodsAndWarnings: the agent's member cache, the one its
// tests read through too, holds the pods its controllers made and Warning events only.
func TestCacheOptionsHoldOnlyOwnedPodsAndWarnings(t *testing.T) {
	var pods, events *labels.Selector
	var eventFields fields.Selector
	for obj, by := range agent.CacheOptions().ByObject {
		switch obj.(type) {
		case *corev1.Pod:
			pods = &by.Label
		case *corev1.Event:
			events, eventFields = &by.Label, by.Field
		}
	}
	if pods == nil || events == nil {
		t.Fatalf("no filter for pods (%v) or events (%v)", pods != nil, events != nil)
	}
	for _, c := range []struct {
		labels labels.Set
		want   bool
	}{
		{labels.Set{musterv1.ControllerLabel: "job"}, true},
		{labels.Set{musterv1.ControllerLabel: "broadcastjob", "app": "x"}, true},
		{labels.Set{"app": "x"}, false},
		{nil, false},
	} {
		if got := (*pods).Matches(c.labels); got != c.want {
			t.Errorf("pod labels %v cached: %v, want %v", c.labels, got, c.want)
		}
	}
	if !eventFields.Matches(fields.Set{"type": corev1.EventTypeWarning}) || eventFields.Matches(fields.Set{"type": corev1.EventTypeNormal}) {
		t.Errorf("event field selector %q does not keep exactly the Warning events", eventFields)
	}
}
