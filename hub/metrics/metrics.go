// Package metrics holds the hub's Prometheus metrics, registered with controller-runtime's
// registry so the manager's /metrics endpoint serves them beside its own (reconcile
// latency and errors per controller come from controller-runtime). Labels are bounded:
// kinds, outcomes, phases and cluster names, never job names.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Outcomes of a placement decision.
const (
	OutcomePlaced             = "Placed"
	OutcomeNoEligibleClusters = "NoEligibleClusters"
	OutcomeNameTaken          = "ShardNameTaken"
)

var (
	// PlacementDecisions counts placement decisions by the kind placed and their outcome.
	PlacementDecisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "muster_placement_decisions_total",
		Help: "Placement decisions, by the kind of object placed and the outcome (Placed, NoEligibleClusters, ShardNameTaken).",
	}, []string{"kind", "outcome"})
	// PlacementDecisionSeconds is how long a placement decision takes in the hub's own
	// process: reading the member clusters and their eligible nodes from the cache and the
	// inventory, and dividing the job among them. The writes that carry the decision out
	// are not in it; they are the API server's time.
	PlacementDecisionSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "muster_placement_decision_seconds",
		Help:    "Time the hub takes to decide where an object runs (clusters and their eligible nodes read, shares divided), before writing its Works, by the kind of object placed.",
		Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5},
	}, []string{"kind"})
	// CronScheduleLag is how late a FleetCronJob created the run of a slot.
	CronScheduleLag = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "muster_cron_schedule_lag_seconds",
		Help:    "Time from a FleetCronJob's scheduled slot to the creation of its run, by the run's kind.",
		Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900},
	}, []string{"kind"})
	// CronMissedSlots counts slots a FleetCronJob did not run: past their starting
	// deadline, or more than it looks back for.
	CronMissedSlots = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "muster_cron_missed_slots_total",
		Help: "Scheduled slots of FleetCronJobs that got no run (missed their starting deadline or too many to catch up), by the run's kind.",
	}, []string{"kind"})
	// Failovers counts shards withdrawn from a member cluster whose NoExecute taint their
	// object no longer tolerates, or whose agent fenced them.
	Failovers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "muster_failovers_total",
		Help: "Shards the hub withdrew from a member cluster with a NoExecute taint (unreachable, or drained) that their object no longer tolerates, or that their agent fenced, by the object's kind.",
	}, []string{"kind"})
	// FailoversHeld counts the rounds in which an object's due evictions waited because
	// the disruption gate took most of its placement's clusters for unreachable at once.
	FailoversHeld = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "muster_failovers_held_total",
		Help: "Rounds in which an object's due evictions were held because more than --unhealthy-cluster-threshold of the clusters its placement selects were unreachable or quiet at once, by the object's kind.",
	}, []string{"kind"})
)

func init() {
	metrics.Registry.MustRegister(PlacementDecisions, PlacementDecisionSeconds, CronScheduleLag, CronMissedSlots, Failovers, FailoversHeld)
	// The cron series exist from the start, at zero: an alert on their increase then sees
	// the first missed slot, and a scrape shows the families before any cron job ran.
	for _, kind := range []string{"FleetJob", "BroadcastJob"} {
		CronScheduleLag.WithLabelValues(kind)
		CronMissedSlots.WithLabelValues(kind)
		Failovers.WithLabelValues(kind)
		FailoversHeld.WithLabelValues(kind)
	}
}
