package webhook

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// TestUpdatesThatKeepTheTemplateAreNotChecked: an object stored before the webhook
// existed, with a template the API server would refuse, can still have its metadata
// changed (a finalizer removed on delete). The validators have no client here, so any
// dry-run would panic.
func TestUpdatesThatKeepTheTemplateAreNotChecked(t *testing.T) {
	bad := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "Bad_Name"}}}}
	ctx := t.Context()

	fj := &musterv1.FleetJob{ObjectMeta: metav1.ObjectMeta{Name: "fj", Finalizers: []string{"x"}}}
	fj.Spec.Template.Spec.Template = bad
	done := fj.DeepCopy()
	done.Finalizers = nil
	if _, err := (fleetJobValidator{}).ValidateUpdate(ctx, fj, done); err != nil {
		t.Errorf("FleetJob finalizer removal refused: %v", err)
	}

	bcj := &musterv1.BroadcastJob{ObjectMeta: metav1.ObjectMeta{Name: "bcj", Labels: map[string]string{"a": "b"}}}
	bcj.Spec.Template = bad
	relabelled := bcj.DeepCopy()
	relabelled.Labels = nil
	if _, err := (broadcastJobValidator{}).ValidateUpdate(ctx, bcj, relabelled); err != nil {
		t.Errorf("BroadcastJob label change refused: %v", err)
	}

	cj := &musterv1.FleetCronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj"}, Spec: musterv1.FleetCronJobSpec{Schedule: "@hourly"}}
	cj.Spec.BroadcastJobTemplate = &musterv1.BroadcastJobTemplateSpec{Spec: musterv1.BroadcastJobSpec{Template: bad}}
	suspended := cj.DeepCopy()
	suspended.Spec.Suspend = new(bool)
	if _, err := (fleetCronJobValidator{}).ValidateUpdate(ctx, cj, suspended); err != nil {
		t.Errorf("FleetCronJob suspend refused: %v", err)
	}

	// Stored before the rule refusing schedules that never fire and timeZone Local.
	old := &musterv1.FleetCronJob{ObjectMeta: metav1.ObjectMeta{Name: "old"}, Spec: musterv1.FleetCronJobSpec{Schedule: "0 0 30 2 *", TimeZone: new(string)}}
	*old.Spec.TimeZone = "Local"
	old.Spec.BroadcastJobTemplate = &musterv1.BroadcastJobTemplateSpec{}
	suspendedOld := old.DeepCopy()
	suspendedOld.Spec.Suspend = new(bool)
	if _, err := (fleetCronJobValidator{}).ValidateUpdate(ctx, old, suspendedOld); err != nil {
		t.Errorf("suspending a FleetCronJob stored with a schedule now refused: %v", err)
	}
	rescheduled := old.DeepCopy()
	rescheduled.Spec.Schedule = "59 23 31 2 *"
	if _, err := (fleetCronJobValidator{}).ValidateUpdate(ctx, old, rescheduled); err == nil {
		t.Error("a new schedule that never fires was admitted on update")
	}
}
