package webhook

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/api/workloadspread"
)

// workloadSpreadValidator refuses WorkloadSpreads that break the rules CEL cannot express
// (percent sums, a target another spread has, patches that do not apply).
type workloadSpreadValidator struct {
	reader client.Reader
}

func (v workloadSpreadValidator) ValidateCreate(ctx context.Context, ws *musterv1.WorkloadSpread) (admission.Warnings, error) {
	return nil, v.validate(ctx, ws)
}

func (v workloadSpreadValidator) ValidateUpdate(ctx context.Context, _, ws *musterv1.WorkloadSpread) (admission.Warnings, error) {
	return nil, v.validate(ctx, ws)
}

func (workloadSpreadValidator) ValidateDelete(context.Context, *musterv1.WorkloadSpread) (admission.Warnings, error) {
	return nil, nil
}

func (v workloadSpreadValidator) validate(ctx context.Context, ws *musterv1.WorkloadSpread) error {
	var others musterv1.WorkloadSpreadList
	listCtx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := v.reader.List(listCtx, &others, client.InNamespace(ws.Namespace)); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("listing WorkloadSpreads: %w", err))
	}
	if errs := workloadspread.Validate(ws, others.Items); len(errs) > 0 {
		return apierrors.NewInvalid(musterv1.GroupVersion.WithKind("WorkloadSpread").GroupKind(), ws.Name, errs)
	}
	return nil
}
