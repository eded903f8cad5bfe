package webhook

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cronapi "github.com/musterhq/muster/api/cronjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/builders"
)

// TestCronRunsAreToldFromLookalikes: only an object named for its annotated slot, with
// its cron's template unchanged, passes as a run whose template the cron's admission
// judged.
func TestCronRunsAreToldFromLookalikes(t *testing.T) {
	template := builders.MakeFleetJob("t", "ns").Obj().Spec
	cj := &musterv1.FleetCronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "ns", UID: types.UID("cron-uid")},
		Spec:       musterv1.FleetCronJobSpec{Schedule: "0 1 * * *", JobTemplate: &musterv1.FleetJobTemplateSpec{Spec: template}},
	}
	slot := time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)
	run := func(name string, change func(*musterv1.FleetJob)) *musterv1.FleetJob {
		fj := &musterv1.FleetJob{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Annotations: map[string]string{musterv1.ScheduledTimeAnnotation: slot.Format(time.RFC3339)}},
			Spec:       *template.DeepCopy(),
		}
		if change != nil {
			change(fj)
		}
		return fj
	}
	for _, c := range []struct {
		name string
		fj   *musterv1.FleetJob
		want bool
	}{
		{"the run of its slot", run(cronapi.ChildName(cj, slot), nil), true},
		{"the run under its alternate name", run(cronapi.AlternateChildName(cj, slot), nil), true},
		{"the run with labels of its own", run(cronapi.ChildName(cj, slot), func(fj *musterv1.FleetJob) { fj.Labels = map[string]string{"team": "a"} }), true},
		{"a changed image", run(cronapi.ChildName(cj, slot), func(fj *musterv1.FleetJob) {
			fj.Spec.Template.Spec.Template.Spec.Containers[0].Image = "other"
		}), false},
		{"a pod made privileged", run(cronapi.ChildName(cj, slot), func(fj *musterv1.FleetJob) {
			fj.Spec.Template.Spec.Template.Spec.HostNetwork = true
		}), false},
		// The Job's name is judged with its template: a longer one may not fit its pods' host names.
		{"a name of another slot", run(cronapi.ChildName(cj, slot.Add(time.Hour)), nil), false},
		{"a name of its own", run("nightly-but-much-longer-than-the-cron-would-ever-name-it", nil), false},
		{"no slot", run(cronapi.ChildName(cj, slot), func(fj *musterv1.FleetJob) { delete(fj.Annotations, musterv1.ScheduledTimeAnnotation) }), false},
		{"a slot that does not parse", run(cronapi.ChildName(cj, slot), func(fj *musterv1.FleetJob) { fj.Annotations[musterv1.ScheduledTimeAnnotation] = "1am" }), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := isFleetJobRun(cj, c.fj); got != c.want {
				t.Errorf("isFleetJobRun = %v, want %v", got, c.want)
			}
		})
	}
	t.Run("a FleetJob of a cron that makes BroadcastJobs", func(t *testing.T) {
		broadcasts := cj.DeepCopy()
		broadcasts.Spec.JobTemplate = nil
		broadcasts.Spec.BroadcastJobTemplate = &musterv1.BroadcastJobTemplateSpec{Spec: musterv1.BroadcastJobSpec{Template: template.Template.Spec.Template}}
		if isFleetJobRun(broadcasts, run(cronapi.ChildName(cj, slot), nil)) {
			t.Error("passed as the run of a cron without a job template")
		}
		bcj := &musterv1.BroadcastJob{Spec: musterv1.BroadcastJobSpec{Template: *template.Template.Spec.Template.DeepCopy()}}
		if !isBroadcastJobRun(broadcasts, bcj) {
			t.Error("the cron's BroadcastJob run did not pass")
		}
		bcj.Spec.Template.Spec.Containers = append(bcj.Spec.Template.Spec.Containers, corev1.Container{Name: "extra", Image: "x"})
		if isBroadcastJobRun(broadcasts, bcj) {
			t.Error("a BroadcastJob with a container of its own passed as the cron's run")
		}
		if isBroadcastJobRun(cj, bcj) {
			t.Error("passed as the BroadcastJob run of a cron that makes FleetJobs")
		}
	})
}
