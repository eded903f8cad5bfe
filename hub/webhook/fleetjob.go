package webhook

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/musterhq/muster/api/templates"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// fleetJobTemplate is where a FleetJob keeps the template of its shards' Jobs.
var fleetJobTemplate = field.NewPath("spec", "template")

// fleetJobValidator refuses a FleetJob whose Job template the members' API servers would
// refuse, with their messages. A FleetJob is checked as the Job a member gets when the
// job is placed whole: named as the FleetJob, with the fleet-wide parallelism and
// completions (a shard's share is never larger), run by the agent. When a WorkloadSpread
// spreads the FleetJob, each subset's Job is checked too: a subset's patch or name can
// make a Job the members refuse out of a template that is valid alone.
type fleetJobValidator struct {
	dryRun dryRun
	// reader reads the WorkloadSpreads straight from the API server, so that a spread
	// created a moment ago is not missed on a stale cache.
	reader client.Reader
}

func (v fleetJobValidator) ValidateCreate(ctx context.Context, fj *musterv1.FleetJob) (admission.Warnings, error) {
	return nil, v.validate(ctx, fj)
}

// ValidateUpdate checks the template only when it changed, so that an object admitted
// before the webhook existed can still get its finalizers removed and be deleted.
func (v fleetJobValidator) ValidateUpdate(ctx context.Context, old, fj *musterv1.FleetJob) (admission.Warnings, error) {
	if equality.Semantic.DeepEqual(old.Spec.Template, fj.Spec.Template) {
		return nil, nil
	}
	return nil, v.validate(ctx, fj)
}

func (fleetJobValidator) ValidateDelete(context.Context, *musterv1.FleetJob) (admission.Warnings, error) {
	return nil, nil
}

func (v fleetJobValidator) validate(ctx context.Context, fj *musterv1.FleetJob) error {
	ctx, cancel := context.WithTimeout(ctx, validateBudget)
	defer cancel()
	kind := musterv1.GroupVersion.WithKind("FleetJob").GroupKind()
	errs, err := v.dryRun.check(ctx, templates.Job(fj.Name, "", fj.UID, &fj.Spec.Template), func(f string) string {
		return templates.JobField(f, fleetJobTemplate)
	})
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		// The subsets' Jobs would repeat the template's own faults.
		return refuse(ctx, kind, fj.Name, errs)
	}
	ws, err := spreadOf(ctx, v.reader, fj)
	if err != nil || ws == nil {
		return err
	}
	checks, err := v.dryRun.checkSubsets(ctx, fj, ws)
	if err != nil {
		return err
	}
	for _, c := range checks {
		errs = append(errs, templates.ThroughSubset(c.errs, fleetJobTemplate, ws.Name, c.subset.Spec.Name)...)
	}
	return refuse(ctx, kind, fj.Name, errs)
}
