package webhook

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// controller-runtime's Validator returns warnings and an error, not audit annotations. The
// validators record theirs in the request's context, and withAuditAnnotations puts them on
// the response, which the API server writes into the request's audit event as
// <webhook name>/<key>.
type auditKey struct{}

// recordAudit adds an audit annotation to the response of the request ctx belongs to; it
// does nothing outside a handler made by withAuditAnnotations.
func recordAudit(ctx context.Context, key, value string) {
	if notes, ok := ctx.Value(auditKey{}).(map[string]string); ok {
		notes[key] = value
	}
}

// withAuditAnnotations wraps h so that the audit annotations its validator records reach
// the response.
func withAuditAnnotations(h admission.Handler) admission.Handler {
	return admission.HandlerFunc(func(ctx context.Context, req admission.Request) admission.Response {
		notes := map[string]string{}
		resp := h.Handle(context.WithValue(ctx, auditKey{}, notes), req)
		if len(notes) > 0 {
			resp.AuditAnnotations = notes
		}
		return resp
	})
}

// registerValidator serves v at path, with the audit annotations it records.
func registerValidator[T runtime.Object](mgr ctrl.Manager, path string, v admission.Validator[T]) {
	wh := admission.WithValidator(mgr.GetScheme(), v)
	wh.Handler = withAuditAnnotations(wh.Handler)
	mgr.GetWebhookServer().Register(path, wh)
}
