package fleetjob_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	hubmetrics "github.com/musterhq/muster/hub/metrics"
	"github.com/musterhq/muster/internal/testing/envtest"
)

func placements(t *testing.T, outcome string) float64 {
	return envtest.Metric(t, "muster_placement_decisions_total", map[string]string{"kind": "FleetJob", "outcome": outcome})
}

func TestPlacementIsCountedAndSaidInASentence(t *testing.T) {
	f := newFixture(t)
	before := placements(t, hubmetrics.OutcomePlaced)
	timed := decisionsTimed(t)
	f.create(duplicate(f))
	c := f.waitCondition(musterv1.FleetJobScheduled, metav1.ConditionTrue, musterv1.FleetJobReasonPlaced, nil)
	if want := "placed 2 shards (Duplicate) in clusters " + f.c1 + " and " + f.c2; c.Message != want {
		t.Errorf("Scheduled message %q, want %q", c.Message, want)
	}
	if got := placements(t, hubmetrics.OutcomePlaced); got < before+1 {
		t.Errorf("muster_placement_decisions_total{kind=FleetJob,outcome=Placed} = %v, want at least %v", got, before+1)
	}
	if got := decisionsTimed(t); got < timed+1 {
		t.Errorf("muster_placement_decision_seconds{kind=FleetJob} counts %v decisions, want at least %v", got, timed+1)
	}
}

// decisionsTimed is how many FleetJob placement decisions the hub's histogram timed.
func decisionsTimed(t *testing.T) float64 {
	return envtest.Metric(t, "muster_placement_decision_seconds", map[string]string{"kind": "FleetJob"})
}

func TestNoEligibleClusterIsCountedAndSaidInASentence(t *testing.T) {
	f := newFixture(t)
	before := placements(t, hubmetrics.OutcomeNoEligibleClusters)
	fj := f.workers(1)
	fj.Spec.Placement.ClusterSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"region": "nowhere"}}
	f.create(fj)
	c := f.waitCondition(musterv1.FleetJobScheduled, metav1.ConditionFalse, musterv1.ReasonNoEligibleClusters, nil)
	// Other tests' clusters share the API server, so the count varies; the words do not.
	if !strings.HasPrefix(c.Message, "no member cluster can take the job; ") || !strings.Contains(c.Message, " do not match the cluster selector") || strings.Contains(c.Message, "map[") {
		t.Errorf("Scheduled message %q: want a sentence counting the clusters the selector does not match", c.Message)
	}
	if got := placements(t, hubmetrics.OutcomeNoEligibleClusters); got < before+1 {
		t.Errorf("muster_placement_decisions_total{kind=FleetJob,outcome=NoEligibleClusters} = %v, want at least %v", got, before+1)
	}
}
