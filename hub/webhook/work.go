package webhook

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/api/work"
)

// workValidator refuses Works an agent could not apply to a steady state (two manifests
// for one object, feedback paths that do not parse), whoever writes them: the hub's own
// Works pass by construction, and the check is pure, so it costs the hub's writes no call.
type workValidator struct{}

func (workValidator) ValidateCreate(ctx context.Context, w *musterv1.Work) (admission.Warnings, error) {
	return nil, refuse(ctx, musterv1.GroupVersion.WithKind("Work").GroupKind(), w.Name, work.Validate(w))
}

// ValidateUpdate checks the spec only when it changed, so that agents can still remove
// their finalizers from a Work stored before the webhook existed.
func (workValidator) ValidateUpdate(ctx context.Context, old, w *musterv1.Work) (admission.Warnings, error) {
	if equality.Semantic.DeepEqual(old.Spec, w.Spec) {
		return nil, nil
	}
	return nil, refuse(ctx, musterv1.GroupVersion.WithKind("Work").GroupKind(), w.Name, work.Validate(w))
}

func (workValidator) ValidateDelete(context.Context, *musterv1.Work) (admission.Warnings, error) {
	return nil, nil
}
