package broadcastjob_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/broadcastjob"
	"github.com/musterhq/muster/internal/testing/envtest"
)

const quota = `broadcastjobs.muster.dev "prefetch" is forbidden: exceeded quota: jobs, requested: count/broadcastjobs.muster.dev=1, used: count/broadcastjobs.muster.dev=5, limited: count/broadcastjobs.muster.dev=5`

func (f *fixture) events(regarding, reason string) []eventsv1.Event {
	f.t.Helper()
	var list eventsv1.EventList
	if err := env.Client.List(f.t.Context(), &list, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Name == regarding && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

func TestShardRefusedByItsMemberIsReportedOnTheBroadcastJob(t *testing.T) {
	f := newFixture(t)
	f.create(f.job("prefetch", f.c1, f.c2))
	envtest.Eventually(t, "a Work in each cluster", func() (bool, string) {
		return len(f.works(f.c1)) == 1 && len(f.works(f.c2)) == 1, ""
	})

	f.agentApplies("prefetch", f.c2, quota, musterv1.BroadcastJobStatus{})
	for desired := int32(1); desired <= 3; desired++ {
		f.agentApplies("prefetch", f.c1, "", musterv1.BroadcastJobStatus{Phase: musterv1.BroadcastJobRunning, BroadcastCounts: musterv1.BroadcastCounts{Desired: desired, Active: 1}})
		c := f.waitCondition("prefetch", musterv1.BroadcastJobShardsApplied, metav1.ConditionFalse, musterv1.ReasonApplyFailed,
			func(j *musterv1.BroadcastJob) bool { return j.Status.Desired == desired })
		if want := "cluster " + f.c2 + ": " + quota; c.Message != want {
			t.Errorf("message %q, want %q", c.Message, want)
		}
	}
	// Every status report brings the job back; the refusal is announced once. The status
	// shows each report, so every later round reads the refusal as reported: the
	// recorder's count is final.
	envtest.Eventually(t, "event ApplyFailed", func() (bool, string) { return len(f.events("prefetch", musterv1.ReasonApplyFailed)) > 0, "" })
	if n := recorder.Count(f.ns, "prefetch", musterv1.ReasonApplyFailed); n != 1 {
		t.Errorf("the controller recorded %d ApplyFailed events, want 1", n)
	}
	if evs := f.events("prefetch", musterv1.ReasonApplyFailed); len(evs) != 1 || evs[0].Series != nil || !strings.Contains(evs[0].Note, "exceeded quota") {
		t.Errorf("want one ApplyFailed event, got %d: %+v", len(evs), evs)
	}
	if phase := f.get("prefetch").Status.Phase; phase == musterv1.BroadcastJobCompleted || phase == musterv1.BroadcastJobFailedPh {
		t.Errorf("phase %s while a shard was never created", phase)
	}

	f.agentApplies("prefetch", f.c2, "", musterv1.BroadcastJobStatus{Phase: musterv1.BroadcastJobRunning, BroadcastCounts: musterv1.BroadcastCounts{Desired: 2, Active: 1}})
	f.waitCondition("prefetch", musterv1.BroadcastJobShardsApplied, metav1.ConditionTrue, musterv1.ReasonApplied, nil)
}

func TestLongNamesGetValidDistinctWorks(t *testing.T) {
	f := newFixture(t)
	long := strings.Repeat("p", 60)
	f.create(f.job(long+"-a", f.c1))
	f.create(f.job(long+"-b", f.c1))
	envtest.Eventually(t, "a Work for each job", func() (bool, string) {
		ws := f.works(f.c1)
		return len(ws) == 2, ""
	})
	ws := f.works(f.c1)
	if ws[0].Name == ws[1].Name {
		t.Errorf("both jobs share Work %s", ws[0].Name)
	}
	for _, w := range ws {
		if errs := validation.IsDNS1123Label(w.Name); len(errs) > 0 {
			t.Errorf("Work name %q: %v", w.Name, errs)
		}
	}
}

// TestLongestNameGetsItsWorksAndRuns: a BroadcastJob may be named with 63 characters
// (dots included), so "broadcastjob-<namespace>-<name>" passes the 63 a Work name may
// have (it is a label value on the member's objects); the job still gets a Work in each
// of its clusters, under its capped name, and runs.
func TestLongestNameGetsItsWorksAndRuns(t *testing.T) {
	f := newFixture(t)
	name := strings.Repeat("l", 31) + "." + strings.Repeat("l", 31)
	if joined := len("broadcastjob-" + f.ns + "-" + name); joined <= 63 {
		t.Fatalf("the joined Work name has %d characters; the test wants more than 63", joined)
	}
	f.create(f.job(name, f.c1, f.c2))
	want := broadcastjob.WorkName(f.job(name))
	for _, c := range []string{f.c1, f.c2} {
		envtest.Eventually(t, "a Work in "+c, func() (bool, string) { return len(f.works(c)) == 1, "" })
		if w := f.works(c)[0]; w.Name != want || len(w.Name) > 63 {
			t.Errorf("Work %s in %s, want %s of at most 63 characters", w.Name, c, want)
		}
		f.agentApplies(name, c, "", musterv1.BroadcastJobStatus{Phase: musterv1.BroadcastJobRunning, BroadcastCounts: musterv1.BroadcastCounts{Desired: 1, Active: 1}})
	}
	f.waitCondition(name, musterv1.BroadcastJobShardsApplied, metav1.ConditionTrue, musterv1.ReasonApplied,
		func(j *musterv1.BroadcastJob) bool {
			return j.Status.Phase == musterv1.BroadcastJobRunning && j.Status.Active == 2
		})
}

func TestHubJobWithoutPlacementSaysSo(t *testing.T) {
	f := newFixture(t)
	f.create(f.job("local"))
	f.waitCondition("local", musterv1.BroadcastJobNodesEligible, metav1.ConditionFalse, musterv1.BroadcastJobReasonNoPlacement,
		func(j *musterv1.BroadcastJob) bool { return j.Status.Phase == musterv1.BroadcastJobPending })
	env.ExpectEvent(t, f.ns, "local", musterv1.BroadcastJobReasonNoPlacement)
	if ws := f.works(f.c1); len(ws) != 0 {
		t.Errorf("a job without placement got Works: %v", ws)
	}
}

// TestNamesakesInNeighbouringNamespacesBothRun: job "c" in namespace "<ns>-b" and job
// "b-c" in namespace "<ns>" join alike ("<ns>-b-c"), yet each gets Works of its own in
// every cluster and runs: no tenant can take the name another's shard needs.
func TestNamesakesInNeighbouringNamespacesBothRun(t *testing.T) {
	f := newFixture(t)
	g := *f
	g.ns = f.ns + "-b"
	f.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: g.ns}})
	g.create(g.job("c", f.c1, f.c2))
	f.create(f.job("b-c", f.c1, f.c2))
	mine, theirs := broadcastjob.WorkName(f.job("b-c")), broadcastjob.WorkName(g.job("c"))
	if mine == theirs {
		t.Fatalf("both jobs name their Works %s", mine)
	}
	for _, c := range []string{f.c1, f.c2} {
		envtest.Eventually(t, "both jobs' Works in "+c, func() (bool, string) {
			return f.workOwner(c, mine) == f.ns && f.workOwner(c, theirs) == g.ns, fmt.Sprintf("%q %q", f.workOwner(c, mine), f.workOwner(c, theirs))
		})
	}
	for _, x := range []struct {
		f    *fixture
		name string
	}{{f, "b-c"}, {&g, "c"}} {
		for _, c := range []string{f.c1, f.c2} {
			x.f.agentApplies(x.name, c, "", musterv1.BroadcastJobStatus{Phase: musterv1.BroadcastJobRunning, BroadcastCounts: musterv1.BroadcastCounts{Desired: 1, Active: 1}})
		}
		x.f.waitCondition(x.name, musterv1.BroadcastJobShardsApplied, metav1.ConditionTrue, musterv1.ReasonApplied,
			func(j *musterv1.BroadcastJob) bool { return j.Status.Active == 2 })
	}
	if evs := append(f.events("b-c", musterv1.ReasonShardNameTaken), g.events("c", musterv1.ReasonShardNameTaken)...); len(evs) != 0 {
		t.Errorf("ShardNameTaken events: %+v", evs)
	}
}

// TestShardNameHeldByAHandMadeWork: a Work made by hand under the name of a job's shard
// (no other job's shard can have it) holds the job's new shards back; the job says so,
// once, and places them when the name is free.
func TestShardNameHeldByAHandMadeWork(t *testing.T) {
	f := newFixture(t)
	workName := broadcastjob.WorkName(f.job("prefetch"))
	squatter := &musterv1.Work{
		ObjectMeta: metav1.ObjectMeta{Name: workName, Namespace: musterv1.MemberNamespace(f.c1)},
		Spec: musterv1.WorkSpec{Manifests: []musterv1.Manifest{{RawExtension: runtime.RawExtension{
			Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default"}}`),
		}}}},
	}
	f.create(squatter)

	f.create(f.job("prefetch", f.c1, f.c2))
	c := f.waitCondition("prefetch", musterv1.BroadcastJobShardsApplied, metav1.ConditionFalse, musterv1.ReasonShardNameTaken, nil)
	want := "Work " + musterv1.MemberNamespace(f.c1) + "/" + workName + ", which would carry the shard, belongs to another object: delete that Work or rename this BroadcastJob"
	if c.Message != want {
		t.Errorf("message %q, want %q", c.Message, want)
	}
	env.ExpectEvent(t, f.ns, "prefetch", musterv1.ReasonShardNameTaken)
	// The status shows the taken name, so every later round reads it as reported.
	if n := recorder.Count(f.ns, "prefetch", musterv1.ReasonShardNameTaken); n != 1 {
		t.Errorf("the controller recorded %d ShardNameTaken events, want 1", n)
	}
	if evs := f.events("prefetch", musterv1.ReasonShardNameTaken); len(evs) != 1 {
		t.Errorf("want one ShardNameTaken event, got %d: %+v", len(evs), evs)
	}
	if f.workOwner(f.c1, workName) != "" || f.workOwner(f.c2, workName) != "" {
		t.Errorf("the job took the hand-made Work, or placed a shard while one is held")
	}

	// Once the name is free, the next look (here: a member cluster change) places it.
	if err := env.Client.Delete(t.Context(), squatter); err != nil {
		t.Fatal(err)
	}
	mc := &musterv1.MemberCluster{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: f.c1}, mc); err != nil {
		t.Fatal(err)
	}
	mc.Labels = map[string]string{"touched": "yes"}
	if err := env.Client.Update(t.Context(), mc); err != nil {
		t.Fatal(err)
	}
	envtest.Eventually(t, "the job's Works", func() (bool, string) {
		return f.workOwner(f.c1, workName) == f.ns && f.workOwner(f.c2, workName) == f.ns, ""
	})
	f.waitCondition("prefetch", musterv1.BroadcastJobShardsApplied, metav1.ConditionUnknown, musterv1.ReasonApplying, nil)
}

// workOwner is the namespace of the BroadcastJob whose shard Work name carries in
// cluster; empty when there is no such Work.
func (f *fixture) workOwner(cluster, name string) string {
	f.t.Helper()
	var w musterv1.Work
	err := env.Client.Get(f.t.Context(), client.ObjectKey{Namespace: musterv1.MemberNamespace(cluster), Name: name}, &w)
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return w.Labels[musterv1.BroadcastJobNamespaceLabel]
}
