package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"

	"gomodules.xyz/jsonpatch/v2"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/placement/clusters"
)

// fleetJobDefaultsPath and broadcastJobDefaultsPath serve the defaults of new FleetJobs
// and BroadcastJobs.
const (
	fleetJobDefaultsPath     = "/mutate-muster-dev-v1alpha1-fleetjob"
	broadcastJobDefaultsPath = "/mutate-muster-dev-v1alpha1-broadcastjob"
)

// maxTolerations is the placement's MaxItems: a default never makes a list the API
// server refuses.
const maxTolerations = 32

// Defaults are what admission adds to a new object that does not say otherwise.
type Defaults struct {
	// UnreachableTolerationSeconds is how long a new FleetJob tolerates
	// muster.dev/unreachable:NoExecute when its placement has no toleration of it: how long
	// its work stays on a cluster whose agent is unreachable before it moves.
	UnreachableTolerationSeconds int64
}

// placementDefaulter adds the default toleration of the unreachable taint to a new
// object's spec.placement, at creation only: the default is then in the object for the
// user to see, and never changes an object the user wrote since. It answers with the one
// JSON patch operation that adds the toleration, rather than the typed object marshalled
// again, which would add every field the user left out as null and change what the API
// server's validation says. A FleetJob always has a placement (an empty one selects every
// cluster); a BroadcastJob without one runs in the cluster it is created in, and gets
// none (a placement would send it to the fleet).
type placementDefaulter struct {
	defaults Defaults
	kind     string
	// placementOptional: an object without spec.placement is left as it is.
	placementOptional bool
}

func (d placementDefaulter) Handle(_ context.Context, req admission.Request) admission.Response {
	var obj struct {
		Spec *struct {
			Placement *struct {
				Tolerations []corev1.Toleration `json:"tolerations"`
			} `json:"placement"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(req.Object.Raw, &obj); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding the %s: %w", d.kind, err))
	}
	if obj.Spec == nil || (obj.Spec.Placement == nil && d.placementOptional) {
		// The API server refuses an object without a spec; nothing to default.
		return admission.Allowed("")
	}
	var have []corev1.Toleration
	if obj.Spec.Placement != nil {
		have = obj.Spec.Placement.Tolerations
	}
	want, added := clusters.WithDefaultToleration(slices.Clone(have), d.defaults.UnreachableTolerationSeconds, maxTolerations)
	if !added {
		return admission.Allowed("")
	}
	op := jsonpatch.JsonPatchOperation{Operation: "add", Path: "/spec/placement/tolerations/-", Value: want[len(want)-1]}
	switch {
	case obj.Spec.Placement == nil:
		op = jsonpatch.JsonPatchOperation{Operation: "add", Path: "/spec/placement", Value: map[string]any{"tolerations": want}}
	case len(have) == 0:
		op = jsonpatch.JsonPatchOperation{Operation: "add", Path: "/spec/placement/tolerations", Value: want}
	}
	return admission.Patched("", op)
}

// registerDefaults writes the MutatingWebhookConfiguration that sends new FleetJobs and
// BroadcastJobs to their defaulters (mgr serves them).
func registerDefaults(ctx context.Context, c client.Client, e Endpoint, caBundle []byte, own *metav1.OwnerReference) error {
	want := []admissionregistrationv1.MutatingWebhook{
		defaultsWebhook("fleetjobs", fleetJobDefaultsPath, e, caBundle),
		defaultsWebhook("broadcastjobs", broadcastJobDefaultsPath, e, caBundle),
	}
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	err := c.Get(ctx, client.ObjectKey{Name: ConfigurationName}, cfg)
	if apierrors.IsNotFound(err) {
		cfg = &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: ConfigurationName}, Webhooks: want}
		cfg.OwnerReferences, _ = withOwner(nil, own)
		return client.IgnoreAlreadyExists(c.Create(ctx, cfg))
	}
	if err != nil {
		return fmt.Errorf("reading the mutating webhook configuration: %w", err)
	}
	refs, added := withOwner(cfg.OwnerReferences, own)
	if sameMutatingEndpoints(cfg.Webhooks, want) && !added {
		return nil
	}
	cfg.Webhooks, cfg.OwnerReferences = want, refs
	if err := c.Update(ctx, cfg); err != nil {
		return fmt.Errorf("updating the mutating webhook configuration: %w", err)
	}
	return nil
}

// defaultsWebhook sends the creates of resource to the defaulter at path.
func defaultsWebhook(resource, path string, e Endpoint, caBundle []byte) admissionregistrationv1.MutatingWebhook {
	return admissionregistrationv1.MutatingWebhook{
		Name:                    resource + ".defaults.muster.dev",
		ClientConfig:            clientConfig(path, e, caBundle),
		AdmissionReviewVersions: []string{"v1"},
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		// The default only shows what the hub does anyway with an object that has no
		// toleration of the taint (hub/internal/failover): a hub that is down, or an older
		// replica mid-rollout that does not serve this path, must not refuse creates.
		FailurePolicy:      ptr.To(admissionregistrationv1.Ignore),
		TimeoutSeconds:     ptr.To[int32](5),
		ReinvocationPolicy: ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule: admissionregistrationv1.Rule{
				APIGroups: []string{musterv1.GroupVersion.Group}, APIVersions: []string{musterv1.GroupVersion.Version}, Resources: []string{resource},
			},
		}},
	}
}

// clientConfig is how the API server reaches path: at URLHost for a hub running as a
// process, else through the webhook Service.
func clientConfig(path string, e Endpoint, caBundle []byte) admissionregistrationv1.WebhookClientConfig {
	cc := admissionregistrationv1.WebhookClientConfig{CABundle: caBundle}
	if e.URLHost != "" {
		cc.URL = ptr.To(fmt.Sprintf("https://%s%s", net.JoinHostPort(e.URLHost, fmt.Sprint(e.Port)), path))
	} else {
		cc.Service = &admissionregistrationv1.ServiceReference{Namespace: e.Namespace, Name: ServiceName, Path: ptr.To(path), Port: ptr.To(int32(443))}
	}
	return cc
}

// sameMutatingEndpoints is sameEndpoints for mutating webhooks.
func sameMutatingEndpoints(have, want []admissionregistrationv1.MutatingWebhook) bool {
	return slices.EqualFunc(have, want, func(h, w admissionregistrationv1.MutatingWebhook) bool {
		return h.Name == w.Name && sameClientConfig(h.ClientConfig, w.ClientConfig) &&
			ptr.Deref(h.FailurePolicy, "") == ptr.Deref(w.FailurePolicy, "") && ptr.Deref(h.TimeoutSeconds, 0) == ptr.Deref(w.TimeoutSeconds, 0) &&
			ptr.Deref(h.ReinvocationPolicy, "") == ptr.Deref(w.ReinvocationPolicy, "") &&
			slices.EqualFunc(h.Rules, w.Rules, func(a, b admissionregistrationv1.RuleWithOperations) bool {
				return slices.Equal(a.Operations, b.Operations) && slices.Equal(a.APIGroups, b.APIGroups) &&
					slices.Equal(a.APIVersions, b.APIVersions) && slices.Equal(a.Resources, b.Resources)
			})
	})
}

func sameClientConfig(h, w admissionregistrationv1.WebhookClientConfig) bool {
	if h.Service != nil && w.Service != nil && (h.Service.Namespace != w.Service.Namespace || h.Service.Name != w.Service.Name ||
		ptr.Deref(h.Service.Path, "") != ptr.Deref(w.Service.Path, "")) {
		return false
	}
	return bytes.Equal(h.CABundle, w.CABundle) && ptr.Deref(h.URL, "") == ptr.Deref(w.URL, "") && (h.Service == nil) == (w.Service == nil)
}
