package app_test

import (
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/builders"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// uninstall hub removes the hub's webhooks before anything else: with a webhook the API
// server can no longer reach (the hub going away), every FleetJob create is refused until
// uninstall runs, and admitted after; the Deployment, namespace and RBAC go, and the CRDs
// stay with the objects in them.
func TestUninstallHubLeavesNoWebhookRefusingWrites(t *testing.T) {
	ctx := t.Context()
	if r := musterctl("init", "--image", "muster.local/muster-hub:v1"); r.code != 0 {
		t.Fatalf("init:\n%s", r)
	}
	unreachable := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "muster-hub"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "fleetjobs.muster.dev",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/validate")},
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"muster.dev"}, APIVersions: []string{"v1alpha1"}, Resources: []string{"fleetjobs"}},
			}},
		}},
	}
	if err := env.Client.Create(ctx, unreachable); err != nil {
		t.Fatal(err)
	}
	create := func() error {
		return env.Client.Create(ctx, builders.MakeFleetJob("after-the-hub", "default").Obj(), client.DryRunAll)
	}
	envtest.Eventually(t, "creates refused by the hub's unreachable webhook", func() (bool, string) {
		err := create()
		return err != nil && strings.Contains(err.Error(), "fleetjobs.muster.dev"), fmt.Sprint(err)
	})

	r := musterctl("uninstall", "hub")
	if r.code != 0 || !hasLine(r.out, "✓ webhook configurations removed") || !hasLine(r.out, "✓ namespace muster-system, RBAC and bootstrap policy removed") {
		t.Fatalf("uninstall hub:\n%s", r)
	}
	envtest.Eventually(t, "creates admitted once the hub is uninstalled", func() (bool, string) {
		err := create()
		return err == nil, fmt.Sprint(err)
	})
	gone := map[client.Object]client.ObjectKey{
		&admissionregistrationv1.ValidatingWebhookConfiguration{}: {Name: "muster-hub"},
		&admissionregistrationv1.MutatingWebhookConfiguration{}:   {Name: "muster-hub"},
		&appsv1.Deployment{}: {Namespace: musterv1.HubNamespace, Name: "muster-hub"},
	}
	for obj, key := range gone {
		if err := env.Client.Get(ctx, key, obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s after uninstall: %v, want NotFound", obj, key, err)
		}
	}
	var ns corev1.Namespace
	if err := env.Client.Get(ctx, client.ObjectKey{Name: musterv1.HubNamespace}, &ns); err == nil && ns.DeletionTimestamp == nil {
		t.Errorf("namespace %s is not being deleted", musterv1.HubNamespace)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "fleetjobs.muster.dev"}, &apiextensionsv1.CustomResourceDefinition{}); err != nil {
		t.Errorf("the FleetJob CRD after uninstall: %v, want it kept", err)
	}
}
