package cronjob_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// The events the built-in CronJob controller records, which users and tools watch for.

// expectEventOfType waits for an event with reason and type (Normal or Warning).
func (f *fixture) expectEventOfType(reason, eventType string) {
	f.t.Helper()
	f.eventually(eventType+" event "+reason, func() (bool, string) {
		var list eventsv1.EventList
		if err := env.Client.List(f.t.Context(), &list, client.InNamespace(f.ns)); err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, ev := range list.Items {
			if ev.Reason == reason && ev.Type == eventType {
				return true, ""
			}
			seen = append(seen, ev.Type+"/"+ev.Reason)
		}
		return false, strings.Join(seen, ",")
	})
}

func (f *fixture) waitActive(cj *musterv1.FleetCronJob, names ...string) {
	f.t.Helper()
	f.eventually(fmt.Sprintf("active %v", names), func() (bool, string) {
		var got []string
		for _, ref := range f.get(cj).Status.Active {
			got = append(got, ref.Name)
		}
		return slices.Equal(got, names), fmt.Sprint(got)
	})
}

func (f *fixture) noEvent(reason string) {
	f.t.Helper()
	if slices.Contains(f.eventReasons(), reason) {
		f.t.Errorf("unexpected %s event; events: %v", reason, f.eventReasons())
	}
}

func TestAFinishedRunIsSeenAndAVanishedOneIsMissing(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *")
	f.tick(cj, time.Minute)
	f.waitActive(cj, slotName(f.m1))
	f.finish(slotName(f.m1), true)
	f.expectEventOfType("SawCompletedJob", corev1.EventTypeNormal)
	f.waitActive(cj)
	f.noEvent("MissingJob")

	f.tick(cj, time.Minute)
	second := slotName(f.m1.Add(time.Minute))
	f.waitActive(cj, second)
	if err := env.Client.Delete(t.Context(), f.fleetJobs()[second]); err != nil {
		t.Fatal(err)
	}
	f.expectEventOfType("MissingJob", corev1.EventTypeNormal)
	f.waitActive(cj)
}

func TestHistoryAndReplaceDeletionsAreSuccessfulDeleteAndNeverMissing(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *", func(cj *musterv1.FleetCronJob) {
		cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0)
		cj.Spec.ConcurrencyPolicy = musterv1.ConcurrencyReplace
	})
	f.tick(cj, time.Minute)
	f.waitActive(cj, slotName(f.m1))
	f.finish(slotName(f.m1), true)
	f.waitChildren()
	f.expectEventOfType("SuccessfulDelete", corev1.EventTypeNormal)
	f.expectEventOfType("SawCompletedJob", corev1.EventTypeNormal)

	f.tick(cj, time.Minute)
	f.waitActive(cj, slotName(f.m1.Add(time.Minute)))
	// The next slot replaces the active run: a deletion of the cron's own, not a loss.
	f.tick(cj, time.Minute)
	f.waitActive(cj, slotName(f.m1.Add(2*time.Minute)))
	f.waitChildren(slotName(f.m1.Add(2 * time.Minute)))
	// A pass once the cache shows the replaced run gone has nothing missing to report.
	f.pass(cj)
	f.noEvent("MissingJob")
	if n := asked.count(f.ns, "MissingJob"); n != 0 {
		t.Errorf("%d MissingJob events asked for", n)
	}
}

func TestAFailedCreateIsAWarningAndStatusIsStillWritten(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *", func(cj *musterv1.FleetCronJob) {
		// The cron takes it; the API server refuses it on the run.
		cj.Spec.JobTemplate.Labels = map[string]string{"app": "not a label value!"}
	})
	f.waitNext(cj, f.m1)
	earlier := f.child("earlier", cj, f.m1.Add(-time.Minute))
	f.waitActive(cj, earlier.Name)
	f.tick(cj, time.Minute)
	f.expectEventOfType("FailedCreate", corev1.EventTypeWarning)
	// The pass that fails to create still records what it saw of the runs.
	f.finish(earlier.Name, true)
	f.eventually("the finished run no longer active", func() (bool, string) {
		got := f.get(cj).Status
		return len(got.Active) == 0 && got.LastSuccessfulTime != nil, fmt.Sprintf("%+v", got)
	})
}

func TestAFailedDeleteIsAWarning(t *testing.T) {
	f := newFixture(t)
	f.refuseDeletes()
	cj := f.cron("* * * * *", func(cj *musterv1.FleetCronJob) {
		cj.Spec.ConcurrencyPolicy = musterv1.ConcurrencyReplace
	})
	f.tick(cj, time.Minute)
	f.waitActive(cj, slotName(f.m1))
	f.tick(cj, time.Minute)
	f.expectEventOfType("FailedDelete", corev1.EventTypeWarning)
}

// refuseDeletes makes the API server refuse to delete the namespace's FleetJobs, through
// a ValidatingAdmissionPolicy, and waits until it does.
func (f *fixture) refuseDeletes() {
	f.t.Helper()
	ctx := f.t.Context()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: f.ns},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Delete},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{musterv1.GroupVersion.Group}, APIVersions: []string{"*"}, Resources: []string{"fleetjobs"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "runs here are kept"}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: f.ns},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        f.ns,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: f.ns},
			}},
		},
	}
	for _, o := range []client.Object{policy, binding} {
		if err := env.Client.Create(ctx, o); err != nil {
			f.t.Fatal(err)
		}
		f.t.Cleanup(func() { _ = env.Client.Delete(ctx, o) })
	}
	probe := f.child("probe", nil, time.Now())
	f.eventually("deletes refused", func() (bool, string) {
		err := env.Client.Delete(ctx, probe.DeepCopy(), client.DryRunAll)
		return err != nil, fmt.Sprint(err)
	})
}

// TestANamespaceBeingDeletedIsLoggedNotWarnedEveryPass: a namespace being deleted
// refuses every run, and every event too. The cron records no FailedCreate (as the
// built-in controller: it could not be stored, and a refused Warning at each pass is only
// noise), does not retry the slot at full speed, and still looks at each slot: its
// nextScheduleTime moves on until the namespace's deletion reaches it.
func TestANamespaceBeingDeletedIsLoggedNotWarnedEveryPass(t *testing.T) {
	f := newFixture(t)
	cj := f.cron("* * * * *")
	f.waitNext(cj, f.m1)
	f.deleteNamespace()
	for i := 1; i <= 4; i++ {
		// Each slot is due, and its run is refused.
		f.tick(cj, time.Minute)
		f.waitNext(cj, f.m1.Add(time.Duration(i)*time.Minute))
	}
	if n := asked.count(f.ns, "FailedCreate"); n != 0 {
		t.Errorf("%d FailedCreate events recorded in a namespace being deleted, want none", n)
	}
	if got := f.get(cj).Status; len(f.fleetJobs()) != 0 || got.LastScheduleTime != nil {
		t.Errorf("runs %v, lastScheduleTime %v; want none run in a namespace being deleted", keys(f.fleetJobs()), got.LastScheduleTime)
	}
}

// deleteNamespace starts deleting the test's namespace. envtest runs no namespace
// controller, so it stays Terminating with its objects in place, as a namespace whose
// deletion waits on a finalizer does in a cluster.
func (f *fixture) deleteNamespace() {
	f.t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns}}
	if err := env.Client.Delete(f.t.Context(), ns); err != nil {
		f.t.Fatal(err)
	}
	f.eventually("namespace Terminating", func() (bool, string) {
		if err := env.Client.Get(f.t.Context(), client.ObjectKeyFromObject(ns), ns); err != nil {
			return false, err.Error()
		}
		return ns.Status.Phase == corev1.NamespaceTerminating, string(ns.Status.Phase)
	})
}
