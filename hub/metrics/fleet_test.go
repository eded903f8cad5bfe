package metrics_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/metrics"
	"github.com/musterhq/muster/internal/testing/envtest"
)

func TestCountPhases(t *testing.T) {
	got := metrics.CountPhases([]string{"Running", "", "Complete", "Running", "Pending"})
	want := map[string]int{"Running": 2, "Pending": 2, "Complete": 1}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("CountPhases (-want +got):\n%s", d)
	}
}

func create(t *testing.T, o client.Object) {
	t.Helper()
	if err := env.Client.Create(t.Context(), o); err != nil {
		t.Fatal(err)
	}
}

// memberRenewedAt creates the test's member cluster, named after its namespace, the
// cluster's namespace, and its agent's lease stamped renewed; it returns the cluster's
// name and namespace.
func memberRenewedAt(t *testing.T, renewed time.Time, before ...func(cluster string)) (cluster, memberNS string) {
	t.Helper()
	cluster = fmt.Sprintf("%.40s-m", env.Namespace(t))
	for _, f := range before {
		f(cluster)
	}
	create(t, &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}})
	memberNS = musterv1.MemberNamespace(cluster)
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: memberNS}})
	create(t, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: leaseName, Namespace: memberNS},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("agent"), RenewTime: &metav1.MicroTime{Time: renewed}},
	})
	return cluster, memberNS
}

func TestMemberGaugesFollowTheLeaseAndTheWorks(t *testing.T) {
	cluster, memberNS := memberRenewedAt(t, clock.Now().Add(-42*time.Second))
	for i, applied := range []metav1.ConditionStatus{metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionTrue} {
		w := &musterv1.Work{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("w%d", i), Namespace: memberNS}}
		create(t, w)
		w.Status.Conditions = []metav1.Condition{{Type: musterv1.WorkApplied, Status: applied, Reason: "Test", LastTransitionTime: metav1.Now()}}
		if err := env.Client.Status().Update(t.Context(), w); err != nil {
			t.Fatal(err)
		}
	}
	labels := map[string]string{"cluster": cluster}
	envtest.Eventually(t, "heartbeat age 42s and 2 refused Works", func() (bool, string) {
		age := envtest.Metric(t, "muster_member_heartbeat_age_seconds", labels)
		failed := envtest.Metric(t, "muster_member_works_failed", labels)
		return age == 42 && failed == 2, fmt.Sprintf("age %v, failed %v", age, failed)
	})
	clock.Step(time.Minute)
	if age := envtest.Metric(t, "muster_member_heartbeat_age_seconds", labels); age != 102 {
		t.Errorf("a minute later the heartbeat age is %v, want 102 (read at scrape time)", age)
	}
}

// TestHeartbeatAgeIsTheHubsOwn: once the hub has seen a renewal, the age counts from
// then on its own clock, not from the agent's stamp (here 42 s behind): the age the hub
// judges the cluster by, which the MemberUnreachable alert reads.
func TestHeartbeatAgeIsTheHubsOwn(t *testing.T) {
	stamped := clock.Now().Add(-42 * time.Second)
	// The hub saw the renewal before any scrape can read the lease.
	cluster, _ := memberRenewedAt(t, stamped, func(cluster string) { hubSaw.set(cluster, stamped, clock.Now().Add(-5*time.Second)) })
	labels := map[string]string{"cluster": cluster}
	envtest.Eventually(t, "heartbeat age 5s, from when the hub saw the renewal", func() (bool, string) {
		age := envtest.Metric(t, "muster_member_heartbeat_age_seconds", labels)
		return age == 5, fmt.Sprintf("age %v", age)
	})
}

func TestJobsByPhaseCountsEveryFleetJob(t *testing.T) {
	ns := env.Namespace(t)
	phase := func(p musterv1.JobPhase) map[string]string {
		return map[string]string{"kind": "FleetJob", "phase": string(p)}
	}
	running := envtest.Metric(t, "muster_jobs", phase(musterv1.JobRunning))
	for i := range 3 {
		fj := &musterv1.FleetJob{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("j%d", i), Namespace: ns},
			Spec:       musterv1.FleetJobSpec{Template: batchTemplate()},
		}
		create(t, fj)
		fj.Status.Phase = musterv1.JobRunning
		if err := env.Client.Status().Update(t.Context(), fj); err != nil {
			t.Fatal(err)
		}
	}
	envtest.Eventually(t, "3 more Running FleetJobs", func() (bool, string) {
		got := envtest.Metric(t, "muster_jobs", phase(musterv1.JobRunning))
		return got == running+3, fmt.Sprintf("muster_jobs{kind=FleetJob,phase=Running} = %v", got)
	})
}

func batchTemplate() batchv1.JobTemplateSpec {
	return batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}},
	}}}}
}

func TestInventoryAgeFollowsTheLastReport(t *testing.T) {
	ns := env.Namespace(t)
	cluster := fmt.Sprintf("%.40s-inv", ns)
	mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}
	create(t, mc)
	mc.Status.LastInventoryReportTime = &metav1.Time{Time: clock.Now().Add(-90 * time.Second)}
	if err := env.Client.Status().Update(t.Context(), mc); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"cluster": cluster}
	envtest.Eventually(t, "inventory age 90s", func() (bool, string) {
		age := envtest.Metric(t, "muster_member_inventory_age_seconds", labels)
		return age == 90, fmt.Sprintf("age %v", age)
	})
	clock.Step(time.Minute)
	if age := envtest.Metric(t, "muster_member_inventory_age_seconds", labels); age != 150 {
		t.Errorf("a minute later the inventory age is %v, want 150 (read at scrape time)", age)
	}
}
