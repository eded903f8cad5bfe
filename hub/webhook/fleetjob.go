package webhook

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/musterhq/muster/api/templates"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// fleetJobTemplate is where a FleetJob keeps the template of its shards' Jobs.
var fleetJobTemplate = field.NewPath("spec", "template")

// fleetJobValidator refuses a FleetJob in a reserved namespace, one whose pods break its
// namespace's Pod Security level, and one whose Job template the members' API servers
// would refuse, with their messages. A FleetJob is checked as the Job a member gets when
// the job is placed whole: named as the FleetJob, with the fleet-wide parallelism and
// completions (a shard's share is never larger), run by the agent. When a WorkloadSpread
// spreads the FleetJob, each subset's Job is checked too: a subset's patch or name can
// make a Job the members refuse out of a template that is valid alone.
type fleetJobValidator struct {
	dryRun dryRun
	// reader reads the WorkloadSpreads straight from the API server, so that a spread
	// created a moment ago is not missed on a stale cache.
	reader  client.Reader
	tenancy tenancy
}

func (v fleetJobValidator) ValidateCreate(ctx context.Context, fj *musterv1.FleetJob) (admission.Warnings, error) {
	return v.validate(ctx, fj)
}

// ValidateUpdate checks the template only when it changed, so that an object admitted
// before the webhook existed can still get its finalizers removed and be deleted.
func (v fleetJobValidator) ValidateUpdate(ctx context.Context, old, fj *musterv1.FleetJob) (admission.Warnings, error) {
	if equality.Semantic.DeepEqual(old.Spec.Template, fj.Spec.Template) {
		return nil, refuse(ctx, fleetJobKind, fj.Name, namespaceErrors(fj.Namespace, v.tenancy.reserved))
	}
	return v.validate(ctx, fj)
}

func (fleetJobValidator) ValidateDelete(context.Context, *musterv1.FleetJob) (admission.Warnings, error) {
	return nil, nil
}

var fleetJobKind = musterv1.GroupVersion.WithKind("FleetJob").GroupKind()

func (v fleetJobValidator) validate(ctx context.Context, fj *musterv1.FleetJob) (admission.Warnings, error) {
	ctx, cancel := context.WithTimeout(ctx, validateBudget)
	defer cancel()
	psa, errs, err := v.tenancy.admit(ctx, fj.Namespace)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, refuse(ctx, fleetJobKind, fj.Name, errs)
	}
	found := psa.evaluate(fleetJobTemplate.Child("spec", "template"), &fj.Spec.Template.Spec.Template)
	errs, err = v.dryRun.check(ctx, templates.Job(fj.Name, "", fj.UID, &fj.Spec.Template), func(f string) string {
		return templates.JobField(f, fleetJobTemplate)
	})
	if err != nil {
		return nil, err
	}
	errs = slices.Concat(found.refusals, errs)
	if len(errs) > 0 {
		// The subsets' Jobs would repeat the template's own faults.
		return psa.respond(ctx, found), refuse(ctx, fleetJobKind, fj.Name, errs)
	}
	ws, err := spreadOf(ctx, v.reader, fj)
	if err != nil || ws == nil {
		return psa.respond(ctx, found), err
	}
	checks, err := v.dryRun.checkSubsets(ctx, fj, ws, psa)
	if err != nil {
		return nil, err
	}
	for _, c := range checks {
		through := func(errs field.ErrorList) field.ErrorList {
			return templates.ThroughSubset(errs, fleetJobTemplate, ws.Name, c.subset.Spec.Name)
		}
		errs = append(errs, through(c.errs)...)
		found.add(c.podSecurity.mapped(through))
	}
	return psa.respond(ctx, found), refuse(ctx, fleetJobKind, fj.Name, errs)
}
