package metrics

import (
	"context"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// scrapeTimeout bounds the cache reads of one scrape.
const scrapeTimeout = 5 * time.Second

var (
	jobsDesc = prometheus.NewDesc("muster_jobs",
		"Jobs on the hub by kind (FleetJob, BroadcastJob) and phase.", []string{"kind", "phase"}, nil)
	heartbeatAgeDesc = prometheus.NewDesc("muster_member_heartbeat_age_seconds",
		"Seconds since the hub saw the member cluster's agent last renew its lease, on the hub's clock (the age the hub judges the cluster by).", []string{"cluster"}, nil)
	worksFailedDesc = prometheus.NewDesc("muster_member_works_failed",
		"Works in the member cluster's namespace whose agent reports Applied=False.", []string{"cluster"}, nil)
	inventoryAgeDesc = prometheus.NewDesc("muster_member_inventory_age_seconds",
		"Seconds since the member cluster's agent last reported its nodes (at least every 5 minutes while it runs).", []string{"cluster"}, nil)
)

// fleetCollector computes the fleet-wide gauges at scrape time from the manager's cache,
// so no reconcile pays for them: jobs by phase, each member's heartbeat age, inventory age
// and refused Works.
type fleetCollector struct {
	cache     client.Reader
	leaseName string
	now       func() time.Time
	seen      SeenAt
}

// SeenAt says when, on the hub's clock, it saw cluster's agent renew its lease at renew
// (by the agent's stamp); false when this hub has not judged that renewal (a standby
// replica, or one just read).
type SeenAt func(cluster string, renew time.Time) (time.Time, bool)

// RegisterFleet registers the fleet gauges read from cache (the manager's client). The
// agent's lease in each member namespace is named leaseName; a heartbeat's age counts from
// when seen says the hub saw it, or, where it cannot say (nil, or not yet), from the
// lease's renew time. A collector registered before (an earlier manager in the same
// process, as in tests) is replaced.
func RegisterFleet(cache client.Reader, leaseName string, now func() time.Time, seen SeenAt) error {
	c := &fleetCollector{cache: cache, leaseName: leaseName, now: now, seen: seen}
	metrics.Registry.Unregister(c)
	return metrics.Registry.Register(c)
}

func (c *fleetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- jobsDesc
	ch <- heartbeatAgeDesc
	ch <- worksFailedDesc
	ch <- inventoryAgeDesc
}

func (c *fleetCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	logger := log.FromContext(ctx).WithName("metrics")
	if err := c.collectJobs(ctx, ch); err != nil {
		logger.Error(err, "reading jobs for muster_jobs")
	}
	if err := c.collectMembers(ctx, ch); err != nil {
		logger.Error(err, "reading member clusters for the member gauges")
	}
}

func (c *fleetCollector) collectJobs(ctx context.Context, ch chan<- prometheus.Metric) error {
	var fjs musterv1.FleetJobList
	if err := c.cache.List(ctx, &fjs); err != nil {
		return err
	}
	phases := make([]string, len(fjs.Items))
	for i := range fjs.Items {
		phases[i] = string(fjs.Items[i].Status.Phase)
	}
	emitPhases(ch, "FleetJob", phases)
	var bcjs musterv1.BroadcastJobList
	if err := c.cache.List(ctx, &bcjs); err != nil {
		return err
	}
	phases = make([]string, len(bcjs.Items))
	for i := range bcjs.Items {
		phases[i] = string(bcjs.Items[i].Status.Phase)
	}
	emitPhases(ch, "BroadcastJob", phases)
	return nil
}

func emitPhases(ch chan<- prometheus.Metric, kind string, phases []string) {
	for phase, n := range CountPhases(phases) {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(n), kind, phase)
	}
}

// CountPhases counts jobs by phase; a job not yet given one counts as Pending.
func CountPhases(phases []string) map[string]int {
	counts := map[string]int{}
	for _, p := range phases {
		if p == "" {
			p = string(musterv1.JobPending)
		}
		counts[p]++
	}
	return counts
}

func (c *fleetCollector) collectMembers(ctx context.Context, ch chan<- prometheus.Metric) error {
	var members musterv1.MemberClusterList
	if err := c.cache.List(ctx, &members); err != nil {
		return err
	}
	var works musterv1.WorkList
	if err := c.cache.List(ctx, &works); err != nil {
		return err
	}
	failed := map[string]int{}
	for i := range works.Items {
		if c := meta.FindStatusCondition(works.Items[i].Status.Conditions, musterv1.WorkApplied); c != nil && c.Status == metav1.ConditionFalse {
			failed[strings.TrimPrefix(works.Items[i].Namespace, musterv1.MemberNamespacePrefix)]++
		}
	}
	now := c.now()
	for i := range members.Items {
		name := members.Items[i].Name
		ch <- prometheus.MustNewConstMetric(worksFailedDesc, prometheus.GaugeValue, float64(failed[name]), name)
		if reported := members.Items[i].Status.LastInventoryReportTime; reported != nil {
			ch <- prometheus.MustNewConstMetric(inventoryAgeDesc, prometheus.GaugeValue, now.Sub(reported.Time).Seconds(), name)
		}
		var lease coordinationv1.Lease
		key := types.NamespacedName{Namespace: musterv1.MemberNamespace(name), Name: c.leaseName}
		if err := c.cache.Get(ctx, key, &lease); err != nil || lease.Spec.RenewTime == nil {
			continue // no heartbeat yet: no age to report
		}
		from := lease.Spec.RenewTime.Time
		if c.seen != nil {
			if at, ok := c.seen(name, from); ok {
				from = at
			}
		}
		ch <- prometheus.MustNewConstMetric(heartbeatAgeDesc, prometheus.GaugeValue, now.Sub(from).Seconds(), name)
	}
	return nil
}
