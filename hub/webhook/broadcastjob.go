package webhook

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/musterhq/muster/api/templates"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// broadcastJobTemplate is where a BroadcastJob keeps the template of its pods.
var broadcastJobTemplate = field.NewPath("spec", "template")

// broadcastJobValidator refuses a BroadcastJob whose pod template the members' API
// servers would refuse when the agent creates its pods, with their messages.
type broadcastJobValidator struct {
	dryRun dryRun
}

func (v broadcastJobValidator) ValidateCreate(ctx context.Context, job *musterv1.BroadcastJob) (admission.Warnings, error) {
	return nil, v.validate(ctx, job)
}

// ValidateUpdate checks the template only when it changed (see fleetJobValidator).
func (v broadcastJobValidator) ValidateUpdate(ctx context.Context, old, job *musterv1.BroadcastJob) (admission.Warnings, error) {
	if equality.Semantic.DeepEqual(old.Spec.Template, job.Spec.Template) {
		return nil, nil
	}
	return nil, v.validate(ctx, job)
}

func (broadcastJobValidator) ValidateDelete(context.Context, *musterv1.BroadcastJob) (admission.Warnings, error) {
	return nil, nil
}

func (v broadcastJobValidator) validate(ctx context.Context, job *musterv1.BroadcastJob) error {
	errs, err := v.dryRun.check(ctx, templates.PodTemplate("", &job.Spec.Template), func(f string) string {
		return templates.PodTemplateField(f, broadcastJobTemplate)
	})
	if err != nil {
		return err
	}
	return refuse(ctx, musterv1.GroupVersion.WithKind("BroadcastJob").GroupKind(), job.Name, errs)
}
