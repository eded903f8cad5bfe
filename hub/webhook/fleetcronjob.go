package webhook

import (
	"context"
	"errors"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	cronapi "github.com/musterhq/muster/api/cronjob"
	"github.com/musterhq/muster/api/templates"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Where a FleetCronJob keeps its children's templates.
var (
	cronJobTemplate          = field.NewPath("spec", "jobTemplate", "spec", "template")
	cronBroadcastJobTemplate = field.NewPath("spec", "broadcastJobTemplate", "spec", "template")
)

// fleetCronJobValidator refuses a FleetCronJob in a reserved namespace, schedules and time
// zones the controller cannot run, children's pods that break the namespace's Pod Security
// level, and children's templates the members' API servers would refuse. A FleetJob
// child's Job is checked under the name the child would get now, so that an Indexed child
// whose pod host names would be too long is refused with the cron.
type fleetCronJobValidator struct {
	dryRun  dryRun
	now     func() time.Time
	tenancy tenancy
}

var fleetCronJobKind = musterv1.GroupVersion.WithKind("FleetCronJob").GroupKind()

func (v fleetCronJobValidator) ValidateCreate(ctx context.Context, cj *musterv1.FleetCronJob) (admission.Warnings, error) {
	return v.validate(ctx, nil, cj)
}

// ValidateUpdate checks the templates only when they changed (see fleetJobValidator).
func (v fleetCronJobValidator) ValidateUpdate(ctx context.Context, old, cj *musterv1.FleetCronJob) (admission.Warnings, error) {
	return v.validate(ctx, old, cj)
}

func (fleetCronJobValidator) ValidateDelete(context.Context, *musterv1.FleetCronJob) (admission.Warnings, error) {
	return nil, nil
}

func (v fleetCronJobValidator) validate(ctx context.Context, old, cj *musterv1.FleetCronJob) (admission.Warnings, error) {
	if errs := namespaceErrors(cj.Namespace, v.tenancy.reserved); len(errs) > 0 {
		return nil, refuse(ctx, fleetCronJobKind, cj.Name, errs)
	}
	var errs field.ErrorList
	// As the templates, the schedule is checked when it is written: rules added later
	// (a schedule that never fires, timeZone Local) must not block updates of a cron stored
	// before them, such as the garbage collector removing a finalizer.
	if old == nil || old.Spec.Schedule != cj.Spec.Schedule || ptr.Deref(old.Spec.TimeZone, "") != ptr.Deref(cj.Spec.TimeZone, "") {
		var err error
		if errs, err = scheduleErrors(cj); err != nil {
			return nil, err
		}
	}
	var warnings admission.Warnings
	if old == nil || !equality.Semantic.DeepEqual(old.Spec.JobTemplate, cj.Spec.JobTemplate) ||
		!equality.Semantic.DeepEqual(old.Spec.BroadcastJobTemplate, cj.Spec.BroadcastJobTemplate) {
		psa, err := v.tenancy.podSecurity.forNamespace(ctx, cj.Namespace)
		if err != nil {
			return nil, err
		}
		found, templateErrs, err := v.templateErrors(ctx, cj, psa)
		if err != nil {
			return nil, err
		}
		errs = slices.Concat(errs, found.refusals, templateErrs)
		warnings = psa.respond(ctx, found)
	}
	return warnings, refuse(ctx, fleetCronJobKind, cj.Name, errs)
}

// templateErrors evaluates the children's pods with psa and dry-runs their template.
func (v fleetCronJobValidator) templateErrors(ctx context.Context, cj *musterv1.FleetCronJob, psa psaCheck) (findings, field.ErrorList, error) {
	switch {
	case cj.Spec.JobTemplate != nil:
		found := psa.evaluate(cronJobTemplate.Child("spec", "template"), &cj.Spec.JobTemplate.Spec.Template.Spec.Template)
		job := templates.Job(cronapi.ChildName(cj, v.now()), "", "", &cj.Spec.JobTemplate.Spec.Template)
		errs, err := v.dryRun.check(ctx, job, func(f string) string { return templates.JobField(f, cronJobTemplate) })
		return found, errs, err
	case cj.Spec.BroadcastJobTemplate != nil:
		found := psa.evaluate(cronBroadcastJobTemplate, &cj.Spec.BroadcastJobTemplate.Spec.Template)
		pods := templates.PodTemplate("", &cj.Spec.BroadcastJobTemplate.Spec.Template)
		errs, err := v.dryRun.check(ctx, pods, func(f string) string { return templates.PodTemplateField(f, cronBroadcastJobTemplate) })
		return found, errs, err
	}
	return findings{}, nil, nil
}

// scheduleErrors returns the parser's complaint about the schedule or time zone.
func scheduleErrors(cj *musterv1.FleetCronJob) (field.ErrorList, error) {
	_, err := cronapi.Parse(cj.Spec.Schedule, ptr.Deref(cj.Spec.TimeZone, ""))
	var bad *cronapi.InvalidError
	if !errors.As(err, &bad) {
		return nil, err
	}
	value := cj.Spec.Schedule
	if bad.Field == "timeZone" {
		value = ptr.Deref(cj.Spec.TimeZone, "")
	}
	return field.ErrorList{field.Invalid(field.NewPath("spec", bad.Field), value, bad.Err.Error())}, nil
}
