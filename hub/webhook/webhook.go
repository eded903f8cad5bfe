// Package webhook is the hub's admission webhook. It gives a new FleetJob its default
// toleration of muster.dev/unreachable:NoExecute (how long its work stays on an
// unreachable cluster), and it refuses what CEL cannot check. FleetJobs, BroadcastJobs, FleetCronJobs and WorkloadSpreads are refused in
// reserved namespaces (the members' system namespaces and Muster's own), and the pod
// templates they run on members are checked against their hub namespace's Pod Security
// level with upstream's evaluator (k8s.io/pod-security-admission): refused at the
// enforce level, warned about at the warn level, noted in the audit log at the audit
// level. The pod and Job templates of FleetJobs, BroadcastJobs and FleetCronJobs are
// validated by the hub's own API server, in a dry-run create of the built-in object a
// member will get, so they are refused at apply time with the members' own messages
// instead of failing later on a Work; a template the webhook saw pass a moment ago (a
// FleetCronJob's runs, a burst of one job) is not dry-run again. It also refuses a FleetCronJob whose schedule or
// time zone does not parse, a WorkloadSpread that breaks the rules of api/workloadspread
// and a Work that breaks those of api/work. The hub manages the serving certificate
// itself: a self-signed one kept in a Secret, so every replica serves the same
// certificate as the registration names.
package webhook

import (
	"context"
	"fmt"
	"slices"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Names of the webhook's objects.
const (
	ConfigurationName  = "muster-hub"
	SecretName         = "muster-hub-webhook-cert"
	ServiceName        = "muster-hub-webhook"
	fleetJobPath       = "/validate-muster-dev-v1alpha1-fleetjob"
	broadcastJobPath   = "/validate-muster-dev-v1alpha1-broadcastjob"
	fleetCronJobPath   = "/validate-muster-dev-v1alpha1-fleetcronjob"
	workloadSpreadPath = "/validate-muster-dev-v1alpha1-workloadspread"
	workPath           = "/validate-muster-dev-v1alpha1-work"
	nodeSlicePath      = "/validate-muster-dev-v1alpha1-nodeslice"
)

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations;mutatingwebhookconfigurations,verbs=get;create;update
// +kubebuilder:rbac:groups=muster.dev,resources=workloadspreads,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;update,namespace=muster-system

// Tenancy are the rules of what a hub namespace may run on the members.
type Tenancy struct {
	// DefaultPodSecurityLevel is the enforce level of a hub namespace whose labels name
	// none; empty means podsecurity.DefaultLevel (baseline).
	DefaultPodSecurityLevel psaapi.Level
	// ReservedNamespaces are refused besides DefaultReservedNamespaces and the hub's own;
	// an entry ending in * is a prefix.
	ReservedNamespaces []string
}

// tenancy applies Tenancy to the objects that run pods on members.
type tenancy struct {
	reserved    []string
	podSecurity podSecurity
}

// admit refuses an object in a reserved namespace (errs), else returns the Pod Security
// check of its namespace.
func (t tenancy) admit(ctx context.Context, namespace string) (psaCheck, field.ErrorList, error) {
	if errs := namespaceErrors(namespace, t.reserved); len(errs) > 0 {
		return psaCheck{}, errs, nil
	}
	c, err := t.podSecurity.forNamespace(ctx, namespace)
	return c, nil, err
}

// Register adds the handlers to mgr's webhook server and writes the
// ValidatingWebhookConfiguration that sends the kinds to them. Templates are dry-run in
// e.Namespace, the hub's namespace, which is reserved with the others of t. The
// WorkloadSpread handler reads the other spreads straight from the API server, so two
// spreads of one target created together cannot both pass on a stale cache.
func Register(ctx context.Context, mgr ctrl.Manager, c client.Client, e Endpoint, caBundle []byte, t Tenancy, d Defaults, l Limits) error {
	dry, err := newDryRun(mgr, e.Namespace)
	if err != nil {
		return err
	}
	psa, err := newPodSecurity(mgr.GetClient(), mgr.GetAPIReader(), t.DefaultPodSecurityLevel)
	if err != nil {
		return err
	}
	ten := tenancy{reserved: slices.Concat(DefaultReservedNamespaces, []string{e.Namespace}, t.ReservedNamespaces), podSecurity: psa}
	registerValidator[*musterv1.FleetJob](mgr, fleetJobPath, fleetJobValidator{dryRun: dry, reader: mgr.GetAPIReader(), tenancy: ten})
	registerValidator[*musterv1.BroadcastJob](mgr, broadcastJobPath, broadcastJobValidator{dryRun: dry, tenancy: ten})
	registerValidator[*musterv1.FleetCronJob](mgr, fleetCronJobPath, fleetCronJobValidator{dryRun: dry, now: time.Now, tenancy: ten})
	registerValidator[*musterv1.WorkloadSpread](mgr, workloadSpreadPath, workloadSpreadValidator{reader: mgr.GetAPIReader(), dryRun: dry, tenancy: ten})
	if err := ctrl.NewWebhookManagedBy(mgr, &musterv1.Work{}).WithValidator(workValidator{}).WithValidatorCustomPath(workPath).Complete(); err != nil {
		return err
	}
	registerValidator[*musterv1.NodeSlice](mgr, nodeSlicePath, nodeSliceValidator{reader: mgr.GetAPIReader(), limits: l})
	mgr.GetWebhookServer().Register(fleetJobDefaultsPath, &admission.Webhook{Handler: placementDefaulter{defaults: d, kind: "FleetJob"}})
	mgr.GetWebhookServer().Register(broadcastJobDefaultsPath, &admission.Webhook{Handler: placementDefaulter{defaults: d, kind: "BroadcastJob", placementOptional: true}})
	own, err := owner(ctx, c)
	if err != nil {
		return err
	}
	if err := registerDefaults(ctx, c, e, caBundle, own); err != nil {
		return err
	}
	want := []admissionregistrationv1.ValidatingWebhook{
		validatingWebhook("fleetjobs.muster.dev", "fleetjobs", fleetJobPath, e, caBundle),
		validatingWebhook("broadcastjobs.muster.dev", "broadcastjobs", broadcastJobPath, e, caBundle),
		validatingWebhook("fleetcronjobs.muster.dev", "fleetcronjobs", fleetCronJobPath, e, caBundle),
		validatingWebhook("workloadspreads.muster.dev", "workloadspreads", workloadSpreadPath, e, caBundle),
		validatingWebhook("works.muster.dev", "works", workPath, e, caBundle),
		// Creates only: a slice has no spec, so the match condition skips its updates.
		validatingWebhook("nodeslices.muster.dev", "nodeslices", nodeSlicePath, e, caBundle),
	}
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	err = c.Get(ctx, client.ObjectKey{Name: ConfigurationName}, cfg)
	if apierrors.IsNotFound(err) {
		cfg = &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: ConfigurationName}, Webhooks: want}
		cfg.OwnerReferences, _ = withOwner(nil, own)
		return client.IgnoreAlreadyExists(c.Create(ctx, cfg))
	}
	if err != nil {
		return fmt.Errorf("reading the webhook configuration: %w", err)
	}
	refs, added := withOwner(cfg.OwnerReferences, own)
	if sameEndpoints(cfg.Webhooks, want) && !added {
		return nil
	}
	cfg.Webhooks, cfg.OwnerReferences = want, refs
	if err := c.Update(ctx, cfg); err != nil {
		return fmt.Errorf("updating the webhook configuration: %w", err)
	}
	return nil
}

// newDryRun makes the dry-run's own client, which drops the API server's warnings: they
// are about the hub's namespace (its pod security level, say), not the user's. It has no
// client-side rate limit: each dry-run answers a user's request that the API server's
// priority and fairness already admitted per user, and one token bucket shared by every
// tenant would let one tenant's burst make another's admission wait past callTimeout and
// be refused.
func newDryRun(mgr ctrl.Manager, namespace string) (dryRun, error) {
	cfg := rest.CopyConfig(mgr.GetConfig())
	cfg.WarningHandler = rest.NoWarnings{}
	cfg.QPS, cfg.RateLimiter = -1, nil
	c, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return dryRun{}, fmt.Errorf("making the webhook's dry-run client: %w", err)
	}
	return dryRun{client: c, namespace: namespace, passed: newPassedTemplates(time.Now)}, nil
}

// validatingWebhook sends creates and updates of resource to path. Every webhook fails
// closed: an object the hub could not check is refused, not admitted unchecked.
func validatingWebhook(name, resource, path string, e Endpoint, caBundle []byte) admissionregistrationv1.ValidatingWebhook {
	return admissionregistrationv1.ValidatingWebhook{
		Name:                    name,
		ClientConfig:            clientConfig(path, e, caBundle),
		AdmissionReviewVersions: []string{"v1"},
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
		TimeoutSeconds:          ptr.To[int32](5),
		// Only a spec a user (or the hub) writes needs checking. Metadata and finalizer
		// updates, which agents and the garbage collector make, never call the hub, so a hub
		// that is down or being upgraded cannot hold up a Work's or a namespace's deletion.
		MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "spec-written", Expression: specWritten}},
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{
				APIGroups: []string{musterv1.GroupVersion.Group}, APIVersions: []string{musterv1.GroupVersion.Version}, Resources: []string{resource},
			},
		}},
	}
}

// specWritten holds for a create, and for an update that changes the spec of an object
// that is not being deleted.
const specWritten = `request.operation != 'UPDATE' || (!has(object.metadata.deletionTimestamp) && (has(object.spec) != has(oldObject.spec) || (has(object.spec) && object.spec != oldObject.spec)))`

// sameEndpoints says whether the registered webhooks already call the wanted ones, with
// the same CA: then there is nothing to write (the API server fills in defaults, so the
// objects themselves never compare equal).
func sameEndpoints(have, want []admissionregistrationv1.ValidatingWebhook) bool {
	if len(have) != len(want) {
		return false
	}
	for i := range want {
		if have[i].Name != want[i].Name || !sameClientConfig(have[i].ClientConfig, want[i].ClientConfig) ||
			!slices.Equal(have[i].MatchConditions, want[i].MatchConditions) {
			return false
		}
	}
	return true
}

// refuse returns the Invalid error for errs, nil when there are none.
func refuse(ctx context.Context, kind schema.GroupKind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Refused", "kind", kind.Kind, "name", name, "errors", len(errs), "first", errs[0].Error())
	return apierrors.NewInvalid(kind, name, errs)
}
