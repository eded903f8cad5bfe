//go:build e2e

package fleetcronjob

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

// lastingCron is a cron whose runs put one pod in each member that lasts d.
// lastingCron is a cron every period whose runs last d.
func lastingCron(name string, period time.Duration, policy musterv1.ConcurrencyPolicy, d time.Duration) *musterv1.FleetCronJob {
	cj := newCron(name, every(period))
	cj.Spec.ConcurrencyPolicy = policy
	job := &cj.Spec.JobTemplate.Spec.Template.Spec
	job.Completions, job.Parallelism = ptr.To[int32](2), ptr.To[int32](2)
	job.Template.Labels = map[string]string{"e2e.muster.dev/outcome": "Succeeded"}
	job.Template.Annotations = map[string]string{"e2e.muster.dev/delay": d.String()}
	return cj
}

func createCron(t *testing.T, cj *musterv1.FleetCronJob) {
	t.Helper()
	if err := fleet.Hub.Client.Create(t.Context(), cj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.Background(), cj) })
}

// runSet is a cron's FleetJobs by the Unix second of their slot (time.Time values are
// poor map keys: equal instants with another location or a monotonic reading differ).
type runSet map[int64]*musterv1.FleetJob

func (rs runSet) at(slot time.Time) *musterv1.FleetJob { return rs[slot.Unix()] }

var errTwoRuns = errors.New("two runs for the slot")

// runs lists the cron's FleetJobs on the hub by the slot they were scheduled for.
func runs(ctx context.Context, cronName string) (runSet, error) {
	var list musterv1.FleetJobList
	if err := fleet.Hub.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := runSet{}
	for i := range list.Items {
		fj := &list.Items[i]
		owner := metav1.GetControllerOf(fj)
		if owner == nil || owner.Name != cronName || fj.DeletionTimestamp != nil {
			continue
		}
		slot, err := time.Parse(time.RFC3339, fj.Annotations[musterv1.ScheduledTimeAnnotation])
		if err != nil {
			return nil, fmt.Errorf("run %s: scheduled-time: %w", fj.Name, err)
		}
		if other, dup := out[slot.Unix()]; dup {
			return nil, fmt.Errorf("%w %s: %s and %s", errTwoRuns, slot.Format(time.RFC3339), other.Name, fj.Name)
		}
		out[slot.Unix()] = fj
	}
	return out, nil
}

func slots(rs runSet) string {
	var out []string
	for slot, fj := range rs {
		out = append(out, fmt.Sprintf("%s(%s):%s", time.Unix(slot, 0).UTC().Format("15:04"), fj.Name, fj.Status.Phase))
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// waitRuns polls the cron's runs until done says they are what the test waits for.
func waitRuns(t *testing.T, cronName string, timeout time.Duration, what string, done func(runSet) bool) runSet {
	t.Helper()
	var got runSet
	err := framework.Until(t.Context(), timeout, what, func(ctx context.Context) (bool, string, error) {
		rs, err := runs(ctx, cronName)
		if errors.Is(err, errTwoRuns) {
			return false, "", err
		}
		if err != nil {
			return false, err.Error(), nil
		}
		got = rs
		return done(rs), slots(rs), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// memberJob returns the run's Job in member m (the shard Job is named after the run), or
// nil when there is none or it is being deleted.
func memberJob(t *testing.T, m *framework.Cluster, run string) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{}
	err := m.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: run}, job)
	if apierrors.IsNotFound(err) || (err == nil && job.DeletionTimestamp != nil) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return job
}

func livePods(t *testing.T, m *framework.Cluster, run string) int {
	t.Helper()
	var pods corev1.PodList
	if err := m.Client.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels{batchv1.JobNameLabel: run}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			n++
		}
	}
	return n
}

func hubEvent(t *testing.T, regarding, reason string) bool {
	t.Helper()
	var events eventsv1.EventList
	if err := fleet.Hub.Client.List(t.Context(), &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(events.Items, func(e eventsv1.Event) bool {
		return e.Regarding.Name == regarding && e.Reason == reason
	})
}

// TestForbidSkipsTheNextSlotFleetWide: a run that outlasts a minute in the members keeps
// the next slot from starting; with a 20s starting deadline that slot is dropped, and the
// one after runs.
// The Forbid cron's timing: its first run lasts past the next slot, which is skipped,
// and ends well before the slot after. The starting deadline is shorter than the time
// from the skipped slot to the run's end, so the skipped slot is not run late either.
const (
	forbidPeriod   = 30 * time.Second
	forbidRun      = 40 * time.Second
	forbidDeadline = 5
)

func TestForbidSkipsTheNextSlotFleetWide(t *testing.T) {
	t.Parallel()
	cj := lastingCron("forbid", forbidPeriod, musterv1.ConcurrencyForbid, forbidRun)
	cj.Spec.StartingDeadlineSeconds = ptr.To[int64](forbidDeadline)
	createCron(t, cj)
	first := waitRuns(t, cj.Name, forbidPeriod+15*time.Second, "the first run", func(rs runSet) bool { return len(rs) == 1 })
	var s0 time.Time
	for slot := range first {
		s0 = time.Unix(slot, 0)
	}
	got := waitRuns(t, cj.Name, time.Until(s0.Add(2*forbidPeriod+30*time.Second)), "the run two slots later", func(rs runSet) bool {
		return rs.at(s0.Add(2*forbidPeriod)) != nil
	})
	if got.at(s0.Add(forbidPeriod)) != nil || len(got) != 2 {
		t.Errorf("runs %s: want the first and the third slot only", slots(got))
	}
	if fj := got.at(s0); !meta.IsStatusConditionTrue(fj.Status.Conditions, musterv1.FleetJobComplete) || len(fj.Status.Clusters) != 2 {
		t.Errorf("the first run %s is %s over %d clusters: want Complete in both members", fj.Name, fj.Status.Phase, len(fj.Status.Clusters))
	}
	if !hubEvent(t, cj.Name, musterv1.FleetCronJobReasonJobAlreadyActive) {
		t.Errorf("no %s event for the skipped slot", musterv1.FleetCronJobReasonJobAlreadyActive)
	}
}

// TestReplaceStopsTheOldRunInEveryMember: at the next slot the running run is deleted on
// the hub and its Jobs and pods leave both members, while the new run starts in both.
// replacePeriod is the Replace cron's period: long enough for the first run's pods to
// start in both members before the next slot replaces it, and for the replacement to take
// over in both before the slot after that.
const replacePeriod = 30 * time.Second

func TestReplaceStopsTheOldRunInEveryMember(t *testing.T) {
	t.Parallel()
	cj := lastingCron("replace", replacePeriod, musterv1.ConcurrencyReplace, 10*time.Minute)
	createCron(t, cj)
	first := waitRuns(t, cj.Name, replacePeriod+15*time.Second, "the first run", func(rs runSet) bool { return len(rs) == 1 })
	var s0 time.Time
	var old string
	for slot, fj := range first {
		s0, old = time.Unix(slot, 0), fj.Name
	}
	err := framework.Until(t.Context(), time.Until(s0.Add(replacePeriod)), "the first run's pod running in both members", func(context.Context) (bool, string, error) {
		var state []string
		ok := true
		for _, m := range fleet.Members {
			job, pods := memberJob(t, m, old), livePods(t, m, old)
			state = append(state, fmt.Sprintf("%s: job %t, pods %d", m.Name, job != nil, pods))
			ok = ok && job != nil && pods == 1
		}
		return ok, strings.Join(state, "; "), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := waitRuns(t, cj.Name, time.Until(s0.Add(replacePeriod+30*time.Second)), "the old run replaced", func(rs runSet) bool {
		return len(rs) == 1 && rs.at(s0.Add(replacePeriod)) != nil
	})
	replacement := got.at(s0.Add(replacePeriod)).Name
	err = framework.Until(t.Context(), time.Until(s0.Add(2*replacePeriod)), "the old run gone from both members and the new one running there", func(context.Context) (bool, string, error) {
		var state []string
		ok := true
		for _, m := range fleet.Members {
			oldJob, oldPods := memberJob(t, m, old), livePods(t, m, old)
			newPods := livePods(t, m, replacement)
			state = append(state, fmt.Sprintf("%s: old job %t pods %d, new pods %d", m.Name, oldJob != nil, oldPods, newPods))
			ok = ok && oldJob == nil && oldPods == 0 && newPods == 1
		}
		return ok, strings.Join(state, "; "), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !hubEvent(t, cj.Name, musterv1.ReasonSuccessfulDelete) {
		t.Errorf("no %s event for the replaced run", musterv1.ReasonSuccessfulDelete)
	}
}
