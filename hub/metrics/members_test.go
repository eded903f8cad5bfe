package metrics_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/builders"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// series returns the value of the series of the named family with labels, and whether a
// scrape now shows it at all.
func series(t *testing.T, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return envtest.Sample(f, labels)
		}
	}
	return 0, false
}

// memberCluster creates a MemberCluster named after the test, with its member namespace.
func memberCluster(t *testing.T, suffix string) (cluster, memberNS string) {
	t.Helper()
	cluster = fmt.Sprintf("%.40s-%s", strings.ToLower(t.Name()), suffix)
	mc := builders.MakeMemberCluster(cluster).Obj()
	mc.UID = ""
	create(t, mc)
	memberNS = musterv1.MemberNamespace(cluster)
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: memberNS}})
	return cluster, memberNS
}

// TestAQuietClusterShowsNoAgeItHasNot: a cluster whose agent never renewed its lease nor
// reported its nodes has no heartbeat or inventory age (an alert on a large age must not
// fire for an age of zero or of 56 years), and no refused Works.
func TestAQuietClusterShowsNoAgeItHasNot(t *testing.T) {
	cluster, _ := memberCluster(t, "quiet")
	labels := map[string]string{"cluster": cluster}
	envtest.Eventually(t, "the cluster's refused-Works gauge", func() (bool, string) {
		_, ok := series(t, "muster_member_works_failed", labels)
		return ok, "no series"
	})
	if v, _ := series(t, "muster_member_works_failed", labels); v != 0 {
		t.Errorf("refused Works %v, want 0", v)
	}
	for _, name := range []string{"muster_member_heartbeat_age_seconds", "muster_member_inventory_age_seconds"} {
		if v, ok := series(t, name, labels); ok {
			t.Errorf("%s = %v for a cluster that never reported", name, v)
		}
	}
}

// TestAWorkAppliedAgainLeavesTheRefusedCount: the refused-Works gauge follows the Work's
// Applied condition both ways, and counts only the cluster's own namespace.
func TestAWorkAppliedAgainLeavesTheRefusedCount(t *testing.T) {
	cluster, memberNS := memberCluster(t, "again")
	other, otherNS := memberCluster(t, "other")
	labels := map[string]string{"cluster": cluster}
	w := &musterv1.Work{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: memberNS}}
	create(t, w)
	create(t, &musterv1.Work{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: otherNS}})
	setApplied := func(status metav1.ConditionStatus) {
		t.Helper()
		w.Status.Conditions = []metav1.Condition{{Type: musterv1.WorkApplied, Status: status, Reason: "Test", LastTransitionTime: metav1.Now()}}
		if err := env.Client.Status().Update(t.Context(), w); err != nil {
			t.Fatal(err)
		}
	}
	wait := func(want float64) {
		t.Helper()
		envtest.Eventually(t, fmt.Sprintf("%v refused Works", want), func() (bool, string) {
			v, _ := series(t, "muster_member_works_failed", labels)
			return v == want, fmt.Sprintf("%v", v)
		})
	}
	setApplied(metav1.ConditionFalse)
	wait(1)
	if v, _ := series(t, "muster_member_works_failed", map[string]string{"cluster": other}); v != 0 {
		t.Errorf("cluster %s counts %v refused Works of %s", other, v, cluster)
	}
	setApplied(metav1.ConditionTrue)
	wait(0)
}

// TestADeletedClusterLeavesTheGauges: once a cluster is deleted, its series go with it
// rather than stay at their last value.
func TestADeletedClusterLeavesTheGauges(t *testing.T) {
	cluster, _ := memberCluster(t, "gone")
	mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: cluster}, mc); err != nil {
		t.Fatal(err)
	}
	mc.Status.LastInventoryReportTime = &metav1.Time{Time: clock.Now().Add(-time.Minute)}
	if err := env.Client.Status().Update(t.Context(), mc); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"cluster": cluster}
	envtest.Eventually(t, "the cluster's inventory age", func() (bool, string) {
		v, ok := series(t, "muster_member_inventory_age_seconds", labels)
		return ok, fmt.Sprintf("%v, %v", v, ok)
	})
	if err := env.Client.Delete(t.Context(), mc); err != nil {
		t.Fatal(err)
	}
	envtest.Eventually(t, "no series of the deleted cluster", func() (bool, string) {
		_, age := series(t, "muster_member_inventory_age_seconds", labels)
		_, failed := series(t, "muster_member_works_failed", labels)
		return !age && !failed, fmt.Sprintf("inventory age shown %v, refused Works shown %v", age, failed)
	})
}

// TestBroadcastJobsWithoutAPhaseCountAsPending: a BroadcastJob the hub has not handled yet
// counts as Pending, and moves to its phase once it has one.
func TestBroadcastJobsWithoutAPhaseCountAsPending(t *testing.T) {
	ns := env.Namespace(t)
	phase := func(p musterv1.BroadcastJobPhase) map[string]string {
		return map[string]string{"kind": "BroadcastJob", "phase": string(p)}
	}
	pending := envtest.Metric(t, "muster_jobs", phase(musterv1.BroadcastJobPending))
	completed := envtest.Metric(t, "muster_jobs", phase(musterv1.BroadcastJobCompleted))
	bj := builders.MakeBroadcastJob("bj", ns).Obj()
	create(t, bj)
	envtest.Eventually(t, "one more Pending BroadcastJob", func() (bool, string) {
		got := envtest.Metric(t, "muster_jobs", phase(musterv1.BroadcastJobPending))
		return got == pending+1, fmt.Sprintf("Pending %v", got)
	})
	bj.Status.Phase = musterv1.BroadcastJobCompleted
	if err := env.Client.Status().Update(t.Context(), bj); err != nil {
		t.Fatal(err)
	}
	envtest.Eventually(t, "the BroadcastJob counted Completed, no longer Pending", func() (bool, string) {
		p, c := envtest.Metric(t, "muster_jobs", phase(musterv1.BroadcastJobPending)), envtest.Metric(t, "muster_jobs", phase(musterv1.BroadcastJobCompleted))
		return p == pending && c == completed+1, fmt.Sprintf("Pending %v, Completed %v", p, c)
	})
}

// TestCronSeriesExistBeforeAnyCronJobRan: the cron lag and missed-slot series of both
// kinds are scraped at zero from the start, so an alert on their increase sees the first
// missed slot.
func TestCronSeriesExistBeforeAnyCronJobRan(t *testing.T) {
	for _, name := range []string{"muster_cron_missed_slots_total", "muster_cron_schedule_lag_seconds"} {
		for _, kind := range []string{"FleetJob", "BroadcastJob"} {
			v, ok := series(t, name, map[string]string{"kind": kind})
			if !ok || v != 0 {
				t.Errorf("%s{kind=%s} = %v, shown %v; want 0, shown", name, kind, v, ok)
			}
		}
	}
}
