package fleetjob_test

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/templates"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/fleetjob"
	"github.com/musterhq/muster/hub/shards"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// getJob reads FleetJob ns/name.
func (f *fixture) getJob(ns, name string) *musterv1.FleetJob {
	f.t.Helper()
	fj := &musterv1.FleetJob{}
	if err := env.Client.Get(f.t.Context(), client.ObjectKey{Namespace: ns, Name: name}, fj); err != nil {
		f.t.Fatal(err)
	}
	return fj
}

// worksOf lists the Works labelled with fj's UID, as "name=member Job", sorted.
func (f *fixture) worksOf(fj *musterv1.FleetJob) []string {
	f.t.Helper()
	var list musterv1.WorkList
	if err := env.Client.List(f.t.Context(), &list, client.MatchingLabels{musterv1.FleetJobUIDLabel: string(fj.UID)}); err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for i := range list.Items {
		out = append(out, list.Items[i].Name+"="+decodeJob(f.t, &list.Items[i]).Name)
	}
	slices.Sort(out)
	return out
}

// waitScheduled waits until FleetJob ns/name is Scheduled with reason.
func (f *fixture) waitScheduled(ns, name, reason string) {
	f.t.Helper()
	envtest.Eventually(f.t, fmt.Sprintf("%s/%s Scheduled %s", ns, name, reason), func() (bool, string) {
		c := meta.FindStatusCondition(f.getJob(ns, name).Status.Conditions, musterv1.FleetJobScheduled)
		return c != nil && c.Reason == reason, fmt.Sprintf("%+v", c)
	})
}

// TestNamesakesInNeighbouringNamespacesBothScheduled: FleetJob "b-c" in namespace "<ns>"
// and FleetJob "c" in namespace "<ns>-b" join alike, yet both are placed, each with a
// Work of its own.
func TestNamesakesInNeighbouringNamespacesBothScheduled(t *testing.T) {
	f := newFixture(t)
	other := f.ns + "-b"
	f.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}})
	for _, key := range []client.ObjectKey{{Namespace: other, Name: "c"}, {Namespace: f.ns, Name: "b-c"}} {
		fj := f.workers(1)
		fj.Namespace, fj.Name = key.Namespace, key.Name
		fj.Spec.Placement.ClusterNames = []string{f.c1}
		f.create(fj)
	}
	f.waitScheduled(other, "c", musterv1.FleetJobReasonPlaced)
	f.waitScheduled(f.ns, "b-c", musterv1.FleetJobReasonPlaced)
	theirs, mine := f.worksOf(f.getJob(other, "c")), f.worksOf(f.getJob(f.ns, "b-c"))
	if len(theirs) != 1 || len(mine) != 1 || theirs[0] == mine[0] {
		t.Errorf("Works %v and %v, want one each", theirs, mine)
	}
	if want := fleetjob.WorkName(f.getJob(f.ns, "b-c"), "") + "=b-c"; len(mine) == 1 && mine[0] != want {
		t.Errorf("Work %v, want %s", mine, want)
	}
}

// TestASubsetThatJoinsAsAnotherFleetJobGetsItsOwnWorkAndJob: FleetJob "workers-a" and
// subset "a" of FleetJob "workers", in one cluster, once both wanted Work and member Job
// "workers-a"; each now has its own.
func TestASubsetThatJoinsAsAnotherFleetJobGetsItsOwnWorkAndJob(t *testing.T) {
	f := newFixture(t)
	plain := f.workers(1)
	plain.Name = "workers-a"
	plain.Spec.Placement.ClusterNames = []string{f.c1}
	f.create(plain)
	f.waitScheduled(f.ns, "workers-a", musterv1.FleetJobReasonPlaced)

	f.create(f.spread(f.subset("a", f.c1, nil)))
	f.create(f.workers(2))
	f.waitScheduled(f.ns, "workers", musterv1.FleetJobReasonPlacedBySpread)
	spread := f.getJob(f.ns, "workers")
	want := fleetjob.WorkName(spread, "a") + "=" + fleetjob.JobName(spread, "a")
	if got := f.worksOf(spread); !slices.Equal(got, []string{want}) || strings.HasSuffix(want, "=workers-a") {
		t.Errorf("the spread's Works %v, want [%s] with a Job other than workers-a", got, want)
	}
	if got := f.worksOf(f.getJob(f.ns, "workers-a")); len(got) != 1 || !strings.HasSuffix(got[0], "=workers-a") {
		t.Errorf("the other FleetJob's Works %v", got)
	}
}

// TestShardNameHeldByAHandMadeWorkIsReportedNotLost: no FleetJob's shard can take
// another's Work name, but a Work made by hand can; the FleetJob says so and writes
// nothing.
func TestShardNameHeldByAHandMadeWorkIsReportedNotLost(t *testing.T) {
	f := newFixture(t)
	squatter := &musterv1.Work{
		ObjectMeta: metav1.ObjectMeta{Name: fleetjob.WorkName(f.workers(2), "a"), Namespace: musterv1.MemberNamespace(f.c1)},
		Spec: musterv1.WorkSpec{Manifests: []musterv1.Manifest{{RawExtension: runtime.RawExtension{
			Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default"}}`),
		}}}},
	}
	f.create(squatter)
	f.create(f.spread(f.subset("a", f.c1, nil)))
	f.create(f.workers(2))
	f.waitScheduled(f.ns, "workers", musterv1.ReasonShardNameTaken)
	c := meta.FindStatusCondition(f.getJob(f.ns, "workers").Status.Conditions, musterv1.FleetJobScheduled)
	want := "Work " + squatter.Namespace + "/" + squatter.Name + ", which would carry a shard, belongs to another object: delete that Work or rename this FleetJob or its WorkloadSpread subset"
	if c.Status != metav1.ConditionFalse || c.Message != want {
		t.Errorf("Scheduled %s %q, want False %q", c.Status, c.Message, want)
	}
	f.expectOneEvent(musterv1.ReasonShardNameTaken, squatter.Name)
	if got := f.shards(); got != "" {
		t.Errorf("shards written: %s", got)
	}
}

// oldWorkName is how hubs before injective names named a Work: the parts joined with
// "-", cut to 63 characters with an FNV hash of the whole.
func oldWorkName(parts ...string) string {
	name := strings.Join(parts, "-")
	if len(name) <= 63 {
		return name
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	suffix := fmt.Sprintf("-%08x", h.Sum32())
	return strings.TrimRight(name[:63-len(suffix)], "-.") + suffix
}

// oldWork is the Work an older hub wrote for fj's shard of subset (none when empty) in
// cluster, under the name it gave it and carrying a Job of the name it gave that.
func (f *fixture) oldWork(fj *musterv1.FleetJob, subset, cluster string, parallelism int32) *musterv1.Work {
	f.t.Helper()
	parts, jobName := []string{"fleetjob", fj.Namespace, fj.Name}, fj.Name
	labels := map[string]string{musterv1.FleetJobUIDLabel: string(fj.UID), musterv1.FleetJobNameLabel: fj.Name, musterv1.FleetJobNamespaceLabel: fj.Namespace}
	if subset != "" {
		parts, jobName = append(parts, subset), fj.Name+"-"+subset
		labels[musterv1.SubsetLabel] = subset
	}
	job := templates.Job(jobName, fj.Namespace, fj.UID, &fj.Spec.Template)
	job.Spec.Parallelism = ptr.To(parallelism)
	if subset != "" {
		job.Labels[musterv1.SubsetLabel] = subset
	}
	w, err := shards.NewWork(oldWorkName(parts...), cluster, labels, job)
	if err != nil {
		f.t.Fatal(err)
	}
	if w.Name == fleetjob.WorkName(fj, subset) {
		f.t.Fatalf("the old and the new name are both %s", w.Name)
	}
	return w
}

// unavailableMember joins a cluster that is not Available yet: no new shard goes there,
// and shards already there stay.
func (f *fixture) unavailableMember(suffix string) string {
	f.t.Helper()
	name := fmt.Sprintf("%.40s-%s", f.ns, suffix)
	f.create(&musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: musterv1.MemberClusterSpec{Accepted: true}})
	f.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: musterv1.MemberNamespace(name)}})
	return name
}

func (f *fixture) makeAvailable(cluster string) {
	f.t.Helper()
	mc := &musterv1.MemberCluster{}
	if err := env.Client.Get(f.t.Context(), client.ObjectKey{Name: cluster}, mc); err != nil {
		f.t.Fatal(err)
	}
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: musterv1.MemberClusterAvailable, Status: metav1.ConditionTrue, Reason: "Test"})
	if err := env.Client.Status().Update(f.t.Context(), mc); err != nil {
		f.t.Fatal(err)
	}
}

// waitSeen waits until the FleetJob's status lists a shard in cluster: the controller
// has read the Works there.
func (f *fixture) waitSeen(cluster string) {
	f.t.Helper()
	envtest.Eventually(f.t, "a shard in "+cluster+" in status", func() (bool, string) {
		st := f.getJob(f.ns, "workers").Status
		return slices.ContainsFunc(st.Clusters, func(c musterv1.ClusterJobStatus) bool { return c.ClusterName == cluster }), fmt.Sprintf("%+v", st.Clusters)
	})
}

// TestAShardAnOlderHubNamedIsFoundByItsOwner: a hub upgraded under running work finds a
// FleetJob's shard by the FleetJob's UID, not by name: it writes no second Work for the
// cluster that has one under the old name, and sums up what that one reports.
func TestAShardAnOlderHubNamedIsFoundByItsOwner(t *testing.T) {
	f := newFixture(t)
	// The FleetJob cannot be placed until its cluster is Available; once it is, only
	// finding the old Work keeps the hub from placing it (its Scheduled is False).
	late := f.unavailableMember("3")
	fj := f.workers(1)
	fj.Spec.Placement.ClusterNames = []string{late}
	f.create(fj)
	f.waitScheduled(f.ns, "workers", musterv1.ReasonNoEligibleClusters)
	fj = f.getJob(f.ns, "workers")
	old := f.oldWork(fj, "", late, 1)
	f.create(old)
	f.waitSeen(late)
	f.makeAvailable(late)

	reportJob(t, old, batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](1)})
	f.waitCondition(musterv1.FleetJobShardsApplied, metav1.ConditionTrue, musterv1.ReasonApplied, func(fj *musterv1.FleetJob) bool {
		return fj.Status.Active == 1 && len(fj.Status.Clusters) == 1 && fj.Status.Clusters[0].ClusterName == late
	})
	if got, want := f.worksOf(fj), []string{old.Name + "=workers"}; !slices.Equal(got, want) {
		t.Errorf("Works %v, want only the old one %v", got, want)
	}
}

// TestASubsetShardAnOlderHubNamedKeepsItsJob: resizing a subset shard an older hub
// placed changes its Work in place, and the member Job keeps its old name, so the
// running Job is resized rather than replaced.
func TestASubsetShardAnOlderHubNamedKeepsItsJob(t *testing.T) {
	f := newFixture(t)
	late := f.unavailableMember("3")
	f.create(f.spread(f.subset("a", late, nil)))
	f.create(f.workers(2))
	f.waitScheduled(f.ns, "workers", musterv1.ReasonNoEligibleClusters)
	fj := f.getJob(f.ns, "workers")
	old := f.oldWork(fj, "a", late, 2)
	f.create(old)
	// An unavailable cluster keeps the replicas it has: the spread takes the old shard
	// as placed.
	f.waitScheduled(f.ns, "workers", musterv1.FleetJobReasonPlacedBySpread)
	f.waitSeen(late)
	f.makeAvailable(late)

	f.scale(3)
	f.waitShards("a@" + late + "=3")
	if got, want := f.worksOf(fj), []string{old.Name + "=workers-a"}; !slices.Equal(got, want) {
		t.Errorf("Works %v, want only the old one, resized, %v", got, want)
	}
}

// reportJob plays the agent: it feeds back status for the Job the Work carries.
func reportJob(t *testing.T, w *musterv1.Work, status batchv1.JobStatus) {
	t.Helper()
	raw, err := json.Marshal(status)
	if err != nil {
		t.Fatal(err)
	}
	cur := &musterv1.Work{}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(w), cur); err != nil {
		t.Fatal(err)
	}
	ms := musterv1.ManifestStatus{Resource: musterv1.ResourceIdentifier{Group: "batch", Version: "v1", Kind: "Job", Namespace: cur.Labels[musterv1.FleetJobNamespaceLabel], Name: "workers"}, Status: &runtime.RawExtension{Raw: raw}}
	meta.SetStatusCondition(&ms.Conditions, metav1.Condition{Type: musterv1.WorkApplied, Status: metav1.ConditionTrue, Reason: "Applied", Message: "applied", ObservedGeneration: cur.Generation})
	cur.Status.Manifests = []musterv1.ManifestStatus{ms}
	if err := env.Client.Status().Update(t.Context(), cur); err != nil {
		t.Fatal(err)
	}
}
