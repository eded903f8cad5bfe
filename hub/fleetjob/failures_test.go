package fleetjob_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// badName is what a member API server says about a container named Bad_Name.
const badName = `Job.batch "workers" is invalid: spec.template.spec.containers[0].name: Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'`

// agentApplies plays the agent of cluster on the FleetJob's Work: the member refused the
// Job with refusal, or created it and reports status.
func (f *fixture) agentApplies(cluster, refusal string, status batchv1.JobStatus) {
	f.t.Helper()
	f.agentAppliesPart(cluster, false, refusal, status)
}

// agentAppliesPart is agentApplies on the cluster's Work that carries a part of an
// evicted shard (part), or on its own shard's.
func (f *fixture) agentAppliesPart(cluster string, part bool, refusal string, status batchv1.JobStatus) {
	f.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var list musterv1.WorkList
		if err := env.Client.List(f.t.Context(), &list, client.InNamespace(musterv1.MemberNamespace(cluster)), client.MatchingLabels{musterv1.FleetJobNamespaceLabel: f.ns}); err != nil {
			return err
		}
		list.Items = slices.DeleteFunc(list.Items, func(w musterv1.Work) bool {
			return (w.Labels[musterv1.PartLabel] != "") != part || w.DeletionTimestamp != nil
		})
		if len(list.Items) != 1 {
			return fmt.Errorf("the Work in %s: %d found", cluster, len(list.Items))
		}
		return f.feedBack(&list.Items[0], refusal, status)
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

// feedBack writes what an agent reports on w: the member refused its Job with refusal,
// or created it and reports status.
func (f *fixture) feedBack(w *musterv1.Work, refusal string, status batchv1.JobStatus) error {
	ms := musterv1.ManifestStatus{Resource: musterv1.ResourceIdentifier{Group: "batch", Version: "v1", Kind: "Job", Namespace: f.ns, Name: "workers"}}
	cond := metav1.Condition{Type: musterv1.WorkApplied, Status: metav1.ConditionTrue, Reason: "Applied", Message: "applied with server-side apply", ObservedGeneration: w.Generation}
	if refusal != "" {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "Invalid", refusal
	} else {
		raw, err := json.Marshal(status)
		if err != nil {
			return err
		}
		ms.Status = &runtime.RawExtension{Raw: raw}
	}
	meta.SetStatusCondition(&ms.Conditions, cond)
	w.Status.Manifests = []musterv1.ManifestStatus{ms}
	return env.Client.Status().Update(f.t.Context(), w)
}

// report writes status on w as its agent would, reading it again after a conflict.
func (f *fixture) report(w *musterv1.Work, status batchv1.JobStatus) {
	f.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(f.t.Context(), client.ObjectKeyFromObject(w), w); err != nil {
			return err
		}
		return f.feedBack(w, "", status)
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

// waitCondition waits for the FleetJob's condition with the given status and reason, and
// returns it.
func (f *fixture) waitCondition(t string, status metav1.ConditionStatus, reason string, also func(*musterv1.FleetJob) bool) *metav1.Condition {
	f.t.Helper()
	var c *metav1.Condition
	envtest.Eventually(f.t, fmt.Sprintf("%s=%s %s", t, status, reason), func() (bool, string) {
		var fj musterv1.FleetJob
		if err := env.Client.Get(f.t.Context(), client.ObjectKey{Namespace: f.ns, Name: "workers"}, &fj); err != nil {
			return false, err.Error()
		}
		c = meta.FindStatusCondition(fj.Status.Conditions, t)
		return c != nil && c.Status == status && c.Reason == reason && (also == nil || also(&fj)), fmt.Sprintf("%+v active=%d", c, fj.Status.Active)
	})
	return c
}

// warnings lists the events about the FleetJob with reason; an event recorded twice is
// one object with a series.
func (f *fixture) warnings(reason string) []eventsv1.Event {
	f.t.Helper()
	var list eventsv1.EventList
	if err := env.Client.List(f.t.Context(), &list, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Name == "workers" && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// expectOneEvent checks that the event with reason was recorded exactly once. Callers
// first wait until the FleetJob's status shows what the event reports: the controller has
// then written it, and every later round reads it and finds nothing new to announce, so
// the recorder's count is final.
func (f *fixture) expectOneEvent(reason, contains string) {
	f.t.Helper()
	envtest.Eventually(f.t, "event "+reason, func() (bool, string) { return len(f.warnings(reason)) > 0, "" })
	if n := recorder.Count(f.ns, "workers", reason); n != 1 {
		f.t.Errorf("the controller recorded %d %s events, want 1", n, reason)
	}
	evs := f.warnings(reason)
	if len(evs) != 1 || evs[0].Series != nil || evs[0].Type != "Warning" || !strings.Contains(evs[0].Note, contains) {
		f.t.Errorf("want one Warning %s event saying %q, got %d: %+v", reason, contains, len(evs), evs)
	}
}

func duplicate(f *fixture) *musterv1.FleetJob {
	fj := f.workers(2)
	fj.Spec.Placement.ClusterNames = []string{f.c1, f.c2}
	fj.Spec.Placement.Mode = musterv1.PlacementDuplicate
	return fj
}

func TestShardRefusedByItsMemberIsReportedOnTheFleetJob(t *testing.T) {
	f := newFixture(t)
	f.create(duplicate(f))
	f.waitShards("@" + f.c1 + "=2 @" + f.c2 + "=2")
	f.waitCondition(musterv1.FleetJobShardsApplied, metav1.ConditionUnknown, musterv1.ReasonApplying, nil)

	f.agentApplies(f.c1, "", batchv1.JobStatus{Active: 1})
	f.agentApplies(f.c2, badName, batchv1.JobStatus{})
	c := f.waitCondition(musterv1.FleetJobShardsApplied, metav1.ConditionFalse, musterv1.ReasonApplyFailed, nil)
	if want := "cluster " + f.c2 + ": " + badName; c.Message != want {
		t.Errorf("message %q, want %q", c.Message, want)
	}
	// Every status report brings the FleetJob back; the refusal is announced once.
	for active := int32(2); active <= 4; active++ {
		f.agentApplies(f.c1, "", batchv1.JobStatus{Active: active})
		f.agentApplies(f.c2, badName, batchv1.JobStatus{})
		f.waitCondition(musterv1.FleetJobShardsApplied, metav1.ConditionFalse, musterv1.ReasonApplyFailed, func(fj *musterv1.FleetJob) bool { return fj.Status.Active == active })
	}
	f.expectOneEvent(musterv1.ReasonApplyFailed, badName)

	// The member takes the Job once it is fixed (or its quota freed).
	f.agentApplies(f.c2, "", batchv1.JobStatus{Active: 2})
	f.waitCondition(musterv1.FleetJobShardsApplied, metav1.ConditionTrue, musterv1.ReasonApplied, nil)
}

func TestShardPodsThatCannotScheduleAreReportedOnTheFleetJob(t *testing.T) {
	f := newFixture(t)
	f.create(duplicate(f))
	f.waitShards("@" + f.c1 + "=2 @" + f.c2 + "=2")
	f.agentApplies(f.c2, "", batchv1.JobStatus{Active: 2, Ready: ptr.To[int32](2)})
	for ready := int32(0); ready < 2; ready++ {
		f.agentApplies(f.c1, "", waiting(2, ready, clock.Now().Add(-time.Minute)))
		c := f.waitCondition(musterv1.FleetJobPodsSchedulable, metav1.ConditionFalse, musterv1.ReasonUnschedulable, func(fj *musterv1.FleetJob) bool { return fj.Status.Ready == 2+ready })
		if want := fmt.Sprintf("cluster %s: %d pods cannot be scheduled: 0/4 nodes are available: 4 Insufficient cpu.", f.c1, 2-ready); c.Message != want {
			t.Errorf("message %q, want %q", c.Message, want)
		}
	}
	f.expectOneEvent(musterv1.ReasonUnschedulable, "Insufficient cpu")

	f.agentApplies(f.c1, "", batchv1.JobStatus{Active: 2, Ready: ptr.To[int32](2)})
	f.waitCondition(musterv1.FleetJobPodsSchedulable, metav1.ConditionTrue, musterv1.ReasonSchedulable, nil)
	f.waitCondition(musterv1.FleetJobShardsApplied, metav1.ConditionTrue, musterv1.ReasonApplied, nil)
}
