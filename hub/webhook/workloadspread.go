package webhook

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/musterhq/muster/api/templates"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/api/workloadspread"
)

// workloadSpreadValidator refuses WorkloadSpreads that break the rules CEL cannot express
// (percent sums, a target another spread has, patches that do not apply), and, when the
// target FleetJob exists, subsets whose Jobs the members' API servers would refuse: a
// patch that makes an invalid pod, or a name that makes Indexed pods' host names too
// long.
type workloadSpreadValidator struct {
	reader client.Reader
	dryRun dryRun
}

func (v workloadSpreadValidator) ValidateCreate(ctx context.Context, ws *musterv1.WorkloadSpread) (admission.Warnings, error) {
	return nil, v.validate(ctx, nil, ws)
}

func (v workloadSpreadValidator) ValidateUpdate(ctx context.Context, old, ws *musterv1.WorkloadSpread) (admission.Warnings, error) {
	return nil, v.validate(ctx, old, ws)
}

func (workloadSpreadValidator) ValidateDelete(context.Context, *musterv1.WorkloadSpread) (admission.Warnings, error) {
	return nil, nil
}

func (v workloadSpreadValidator) validate(ctx context.Context, old, ws *musterv1.WorkloadSpread) error {
	ctx, cancel := context.WithTimeout(ctx, validateBudget)
	defer cancel()
	kind := musterv1.GroupVersion.WithKind("WorkloadSpread").GroupKind()
	var others musterv1.WorkloadSpreadList
	listCtx, cancelList := context.WithTimeout(ctx, callTimeout)
	defer cancelList()
	if err := v.reader.List(listCtx, &others, client.InNamespace(ws.Namespace)); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("listing WorkloadSpreads: %w", err))
	}
	if errs := workloadspread.Validate(ws, others.Items); len(errs) > 0 {
		return apierrors.NewInvalid(kind, ws.Name, errs)
	}
	// As for templates, an update that keeps the subsets is not rechecked, so that a
	// spread admitted before this check can still lose its finalizers.
	if old != nil && equality.Semantic.DeepEqual(old.Spec.Subsets, ws.Spec.Subsets) {
		return nil
	}
	errs, err := v.subsetErrors(ctx, ws)
	if err != nil {
		return err
	}
	return refuse(ctx, kind, ws.Name, errs)
}

// subsetErrors checks the Jobs of ws's subsets for its target, on the subsets' fields;
// none while the target does not exist (the FleetJob's own admission checks them then).
func (v workloadSpreadValidator) subsetErrors(ctx context.Context, ws *musterv1.WorkloadSpread) (field.ErrorList, error) {
	fj, err := targetOf(ctx, v.reader, ws)
	if err != nil || fj == nil {
		return nil, err
	}
	checks, err := v.dryRun.checkSubsets(ctx, fj, ws)
	if err != nil {
		return nil, err
	}
	var errs field.ErrorList
	for _, c := range checks {
		errs = append(errs, templates.OnSubset(c.errs, c.subset)...)
	}
	return errs, nil
}
