package webhook

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/musterhq/muster/api/podsecurity"
)

// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// podSecurity checks the pod templates the hub runs on members against the Pod Security
// level of their hub namespace, with upstream's evaluator: the checks and messages of the
// members' own API servers.
type podSecurity struct {
	evaluator policy.Evaluator
	// cache reads namespaces from the manager's cache; api reads one the cache has not seen
	// yet (created a moment ago).
	cache, api   client.Reader
	defaultLevel psaapi.Level
}

func newPodSecurity(cache, api client.Reader, defaultLevel psaapi.Level) (podSecurity, error) {
	e, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		return podSecurity{}, fmt.Errorf("making the Pod Security evaluator: %w", err)
	}
	return podSecurity{evaluator: e, cache: cache, api: api, defaultLevel: defaultLevel}, nil
}

// forNamespace returns the check for objects in hub namespace ns, at its level.
func (p podSecurity) forNamespace(ctx context.Context, ns string) (psaCheck, error) {
	var obj corev1.Namespace
	err := p.cache.Get(ctx, client.ObjectKey{Name: ns}, &obj)
	if apierrors.IsNotFound(err) {
		callCtx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		err = p.api.Get(callCtx, client.ObjectKey{Name: ns}, &obj)
	}
	if err != nil {
		err = fmt.Errorf("reading namespace %s for its Pod Security level: %w", ns, err)
		ctrl.LoggerFrom(ctx).Error(err, "Could not check pod templates")
		return psaCheck{}, apierrors.NewInternalError(err)
	}
	pol, labelErrs := podsecurity.Resolve(obj.Labels, p.defaultLevel)
	return psaCheck{evaluator: p.evaluator, policy: pol, labelErrs: labelErrs}, nil
}

// psaCheck evaluates pod templates against one namespace's policy.
type psaCheck struct {
	evaluator policy.Evaluator
	policy    psaapi.Policy
	// labelErrs are the namespace's labels that do not parse; the policy then holds what
	// the members' API servers would make of them.
	labelErrs field.ErrorList
}

// findings are what a policy says about pod templates, each on the field of the template's
// spec.
type findings struct {
	// refusals break the enforce level: the object is refused.
	refusals field.ErrorList
	// warnings break the warn level, audits the audit level.
	warnings, audits field.ErrorList
}

func (f *findings) add(g findings) {
	f.refusals = append(f.refusals, g.refusals...)
	f.warnings = append(f.warnings, g.warnings...)
	f.audits = append(f.audits, g.audits...)
}

// mapped returns f with its findings moved by m (see templates.OnSubset).
func (f findings) mapped(m func(field.ErrorList) field.ErrorList) findings {
	return findings{refusals: m(f.refusals), warnings: m(f.warnings), audits: m(f.audits)}
}

// evaluate checks the pod template at path. As upstream's admission, it reports each level
// with the evaluator's own reasons, and warns only about what it does not refuse.
func (c psaCheck) evaluate(path *field.Path, t *corev1.PodTemplateSpec) findings {
	spec := path.Child("spec")
	var f findings
	if detail, ok := c.violation(c.policy.Enforce, t); !ok {
		f.refusals = field.ErrorList{field.Forbidden(spec, fmt.Sprintf("violates PodSecurity %q: %s", c.policy.Enforce.String(), detail))}
	} else if detail, ok := c.violation(c.policy.Warn, t); !ok {
		f.warnings = field.ErrorList{field.Forbidden(spec, fmt.Sprintf("would violate PodSecurity %q: %s", c.policy.Warn.String(), detail))}
	}
	if detail, ok := c.violation(c.policy.Audit, t); !ok {
		f.audits = field.ErrorList{field.Forbidden(spec, fmt.Sprintf("would violate PodSecurity %q: %s", c.policy.Audit.String(), detail))}
	}
	return f
}

// violation evaluates t at lv: the evaluator's reasons and details, and whether t passes.
func (c psaCheck) violation(lv psaapi.LevelVersion, t *corev1.PodTemplateSpec) (string, bool) {
	result := policy.AggregateCheckResults(c.evaluator.EvaluatePod(lv, &t.ObjectMeta, &t.Spec))
	return result.ForbiddenDetail(), result.Allowed
}

// respond turns f into the admission's answer: the refusal of kind's object name, or its
// warnings, and its audit annotations (recorded in ctx, see withAuditAnnotations): the
// enforced policy, the audit level's findings and labels that do not parse, under the keys
// upstream's admission uses (the API server prefixes them with the webhook's name).
func (c psaCheck) respond(ctx context.Context, f findings) admission.Warnings {
	recordAudit(ctx, psaapi.EnforcedPolicyAnnotationKey, c.policy.Enforce.String())
	if len(f.audits) > 0 {
		recordAudit(ctx, psaapi.AuditViolationsAnnotationKey, joinFindings(f.audits))
	}
	var warnings admission.Warnings
	if len(c.labelErrs) > 0 {
		msg := "the namespace's Pod Security labels do not parse: " + c.labelErrs.ToAggregate().Error()
		recordAudit(ctx, "error", msg)
		warnings = append(warnings, msg)
	}
	if len(f.refusals) > 0 {
		return nil
	}
	for _, w := range f.warnings {
		warnings = append(warnings, w.Field+": "+w.Detail)
	}
	return warnings
}

func joinFindings(errs field.ErrorList) string {
	parts := make([]string, 0, len(errs))
	for _, e := range errs {
		parts = append(parts, e.Field+": "+e.Detail)
	}
	return strings.Join(parts, "; ")
}
