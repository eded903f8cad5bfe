package webhook

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/musterhq/muster/api/templates"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// broadcastJobTemplate is where a BroadcastJob keeps the template of its pods.
var broadcastJobTemplate = field.NewPath("spec", "template")

// broadcastJobValidator refuses a BroadcastJob in a reserved namespace, one whose pods
// break its namespace's Pod Security level, and one whose pod template the members' API
// servers would refuse when the agent creates its pods, with their messages.
type broadcastJobValidator struct {
	dryRun  dryRun
	tenancy tenancy
}

var broadcastJobKind = musterv1.GroupVersion.WithKind("BroadcastJob").GroupKind()

func (v broadcastJobValidator) ValidateCreate(ctx context.Context, job *musterv1.BroadcastJob) (admission.Warnings, error) {
	return v.validate(ctx, job)
}

// ValidateUpdate checks the template only when it changed (see fleetJobValidator).
func (v broadcastJobValidator) ValidateUpdate(ctx context.Context, old, job *musterv1.BroadcastJob) (admission.Warnings, error) {
	if equality.Semantic.DeepEqual(old.Spec.Template, job.Spec.Template) {
		return nil, refuse(ctx, broadcastJobKind, job.Name, namespaceErrors(job.Namespace, v.tenancy.reserved))
	}
	return v.validate(ctx, job)
}

func (broadcastJobValidator) ValidateDelete(context.Context, *musterv1.BroadcastJob) (admission.Warnings, error) {
	return nil, nil
}

func (v broadcastJobValidator) validate(ctx context.Context, job *musterv1.BroadcastJob) (admission.Warnings, error) {
	psa, errs, err := v.tenancy.admit(ctx, job.Namespace)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, refuse(ctx, broadcastJobKind, job.Name, errs)
	}
	found := psa.evaluate(broadcastJobTemplate, &job.Spec.Template)
	errs, err = v.dryRun.check(ctx, templates.PodTemplate("", &job.Spec.Template), func(f string) string {
		return templates.PodTemplateField(f, broadcastJobTemplate)
	})
	if err != nil {
		return nil, err
	}
	return psa.respond(ctx, found), refuse(ctx, broadcastJobKind, job.Name, slices.Concat(found.refusals, errs))
}
