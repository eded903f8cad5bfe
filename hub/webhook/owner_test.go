package webhook_test

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/hub/webhook"
)

// Both webhook configurations the hub registers belong to the hub's ClusterRole, so that
// the garbage collector removes them with the installation (helm uninstall knows nothing
// of them); the kind suite's helm uninstall checks that it does.
func TestTheWebhookConfigurationsBelongToTheHubsClusterRole(t *testing.T) {
	var role rbacv1.ClusterRole
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: webhook.OwnerClusterRole}, &role); err != nil {
		t.Fatal(err)
	}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	for _, cfg := range []client.Object{validating, mutating} {
		if err := env.Client.Get(t.Context(), client.ObjectKey{Name: webhook.ConfigurationName}, cfg); err != nil {
			t.Fatal(err)
		}
		refs := cfg.GetOwnerReferences()
		want := metav1.OwnerReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: webhook.OwnerClusterRole, UID: role.UID}
		if len(refs) != 1 || refs[0] != want {
			t.Errorf("%T %s is owned by %+v, want the hub's ClusterRole %+v", cfg, cfg.GetName(), refs, want)
		}
	}
}
