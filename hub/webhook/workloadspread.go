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

// workloadSpreadValidator refuses WorkloadSpreads in reserved namespaces, those that break
// the rules CEL cannot express (percent sums, a target another spread has, patches that do
// not apply), and, when the target FleetJob exists, subsets whose pods break the
// namespace's Pod Security level or whose Jobs the members' API servers would refuse: a
// patch that makes an invalid or privileged pod, or a name that makes Indexed pods' host
// names too long.
type workloadSpreadValidator struct {
	reader  client.Reader
	dryRun  dryRun
	tenancy tenancy
}

func (v workloadSpreadValidator) ValidateCreate(ctx context.Context, ws *musterv1.WorkloadSpread) (admission.Warnings, error) {
	return v.validate(ctx, nil, ws)
}

func (v workloadSpreadValidator) ValidateUpdate(ctx context.Context, old, ws *musterv1.WorkloadSpread) (admission.Warnings, error) {
	return v.validate(ctx, old, ws)
}

func (workloadSpreadValidator) ValidateDelete(context.Context, *musterv1.WorkloadSpread) (admission.Warnings, error) {
	return nil, nil
}

var workloadSpreadKind = musterv1.GroupVersion.WithKind("WorkloadSpread").GroupKind()

func (v workloadSpreadValidator) validate(ctx context.Context, old, ws *musterv1.WorkloadSpread) (admission.Warnings, error) {
	ctx, cancel := context.WithTimeout(ctx, validateBudget)
	defer cancel()
	if errs := namespaceErrors(ws.Namespace, v.tenancy.reserved); len(errs) > 0 {
		return nil, refuse(ctx, workloadSpreadKind, ws.Name, errs)
	}
	var others musterv1.WorkloadSpreadList
	listCtx, cancelList := context.WithTimeout(ctx, callTimeout)
	defer cancelList()
	if err := v.reader.List(listCtx, &others, client.InNamespace(ws.Namespace)); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("listing WorkloadSpreads: %w", err))
	}
	if errs := workloadspread.Validate(ws, others.Items); len(errs) > 0 {
		return nil, apierrors.NewInvalid(workloadSpreadKind, ws.Name, errs)
	}
	// As for templates, an update that keeps the subsets is not rechecked, so that a
	// spread admitted before this check can still lose its finalizers.
	if old != nil && equality.Semantic.DeepEqual(old.Spec.Subsets, ws.Spec.Subsets) {
		return nil, nil
	}
	return v.checkSubsets(ctx, ws)
}

// checkSubsets checks the pods and Jobs of ws's subsets for its target, on the subsets'
// fields; nothing while the target does not exist (the FleetJob's own admission checks
// them then).
func (v workloadSpreadValidator) checkSubsets(ctx context.Context, ws *musterv1.WorkloadSpread) (admission.Warnings, error) {
	fj, err := targetOf(ctx, v.reader, ws)
	if err != nil || fj == nil {
		return nil, err
	}
	psa, err := v.tenancy.podSecurity.forNamespace(ctx, ws.Namespace)
	if err != nil {
		return nil, err
	}
	checks, err := v.dryRun.checkSubsets(ctx, fj, ws, psa)
	if err != nil {
		return nil, err
	}
	var errs field.ErrorList
	var found findings
	for _, c := range checks {
		on := func(errs field.ErrorList) field.ErrorList { return templates.OnSubset(errs, c.subset) }
		errs = append(errs, on(c.errs)...)
		found.add(c.podSecurity.mapped(on))
	}
	return psa.respond(ctx, found), refuse(ctx, workloadSpreadKind, ws.Name, errs)
}
