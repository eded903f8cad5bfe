// Package metrics holds the agent's Prometheus metrics, registered with controller-runtime's
// registry so the manager's /metrics endpoint serves them beside its own (reconcile
// latency and errors per controller come from controller-runtime:
// controller_runtime_reconcile_time_seconds, controller_runtime_reconcile_errors_total).
// Labels are bounded: the agent's own cluster and kinds, never object names.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// WorkApplyDuration is how long applying all of one Work's manifests to the member took.
	WorkApplyDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "muster_agent_work_apply_duration_seconds",
		Help:    "Time to apply all of one Work's manifests to the member cluster.",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	}, []string{"cluster"})
	// WorkApplyFailures counts manifests the member refused, per apply attempt.
	WorkApplyFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "muster_agent_work_apply_failures_total",
		Help: "Manifests of Works that failed to apply to the member cluster, counted per attempt.",
	}, []string{"cluster"})
	// PodsCreated counts pods the agent's job controllers created, by owner kind.
	PodsCreated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "muster_agent_pods_created_total",
		Help: "Pods the agent created, by the kind of job that owns them (Job, BroadcastJob).",
	}, []string{"kind"})
	// PodsDeleted counts pods the agent's job controllers deleted, by owner kind.
	PodsDeleted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "muster_agent_pods_deleted_total",
		Help: "Pods the agent deleted, by the kind of job that owns them (Job, BroadcastJob).",
	}, []string{"kind"})
)

func init() {
	metrics.Registry.MustRegister(WorkApplyDuration, WorkApplyFailures, PodsCreated, PodsDeleted)
	// The pod counters exist at zero for both kinds from the start, so that a dashboard or
	// a rate() sees the first pod, and an agent that never deleted one still exports them.
	for _, kind := range []string{"Job", "BroadcastJob"} {
		PodsCreated.WithLabelValues(kind)
		PodsDeleted.WithLabelValues(kind)
	}
}

// ForCluster creates the agent's per-cluster series at zero, so that they are scraped
// before the first apply: an alert on the failures' rate then sees the first one.
func ForCluster(cluster string) {
	WorkApplyDuration.WithLabelValues(cluster)
	WorkApplyFailures.WithLabelValues(cluster)
}

// CertificateExpiry registers muster_agent_certificate_expiry_seconds for cluster: the
// seconds until the agent's hub certificate, as notAfter returns it now, expires. It is
// read at scrape time, so a rotation shows at once.
func CertificateExpiry(cluster string, notAfter func() time.Time, now func() time.Time) prometheus.Collector {
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "muster_agent_certificate_expiry_seconds",
		Help:        "Seconds until the agent's hub client certificate expires (negative once expired).",
		ConstLabels: prometheus.Labels{"cluster": cluster},
	}, func() float64 { return notAfter().Sub(now()).Seconds() })
	return g
}
