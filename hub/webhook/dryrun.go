package webhook

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/templates"
)

// callTimeout bounds each call the webhook makes to the API server, well under the 5s the
// API server waits for the webhook, so that a slow call is refused with its own error
// rather than the API server's timeout.
const callTimeout = 2 * time.Second

// validateBudget bounds a whole validation, which may make several calls (a FleetJob's
// Job and one per WorkloadSpread subset): past it the object is refused with the
// webhook's own error before the API server's 5s wait for the webhook runs out.
const validateBudget = 4 * time.Second

// dryRun has the hub's own API server validate the built-in objects the members will get
// from a template, by creating them in a dry-run: nothing is stored, and the API server's
// rules and messages are the members' own. The objects go to the hub's namespace, the one
// place the hub may create Jobs and PodTemplates.
type dryRun struct {
	client    client.Client
	namespace string
	// passed skips the objects that passed a moment ago; nil dry-runs every one.
	passed *passedTemplates
}

// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=create,namespace=muster-system
// +kubebuilder:rbac:groups="",resources=podtemplates,verbs=create,namespace=muster-system

// check creates obj in a dry-run and returns the API server's complaints about it, each
// on the user's field that where maps it to; none when the API server would store it.
// Any other failure is returned as an error: the template is refused unchecked rather
// than admitted unchecked, as the webhook's failure policy does when the hub is down.
func (d dryRun) check(ctx context.Context, obj client.Object, where func(string) string) (field.ErrorList, error) {
	key, keyErr := dryRunKey(obj)
	if keyErr == nil && d.passed.seen(key) {
		return nil, nil
	}
	callCtx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	obj.SetNamespace(d.namespace)
	err := d.client.Create(callCtx, obj, client.DryRunAll)
	// AlreadyExists comes from storage, after validation passed.
	if err == nil || apierrors.IsAlreadyExists(err) {
		if keyErr == nil {
			d.passed.pass(key)
		}
		return nil, nil
	}
	var status apierrors.APIStatus
	if apierrors.IsInvalid(err) && errors.As(err, &status) {
		if details := status.Status().Details; details != nil && len(details.Causes) > 0 {
			return templates.Errors(details.Causes, where), nil
		}
		return field.ErrorList{field.Invalid(field.NewPath(where("")), field.OmitValueType{}, status.Status().Message)}, nil
	}
	err = fmt.Errorf("checking the template with a dry-run create of a %s in namespace %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, d.namespace, err)
	ctrl.LoggerFrom(ctx).Error(err, "Could not check a template")
	return nil, apierrors.NewInternalError(err)
}
