package registration_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/identity"
	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/deploy/charts"
	"github.com/musterhq/muster/hub/registration"
	"github.com/musterhq/muster/internal/testing/envtest"
)

var env *envtest.Environment

// TestMain runs the registration reconciler and the CSR approver against a real API
// server for the whole package, with the bootstrap RBAC and admission policies that
// `musterctl init` installs.
func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, func(mgr ctrl.Manager) error {
		if err := installHubPolicy(mgr.GetConfig()); err != nil {
			return err
		}
		cs, err := kubernetes.NewForConfig(mgr.GetConfig())
		if err != nil {
			return err
		}
		if err := (&registration.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("test"), MaxNodesPerMember: maxNodesPerMember}).SetupWithManager(mgr); err != nil {
			return err
		}
		return (&registration.Approver{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Clientset: cs, Recorder: mgr.GetEventRecorder("test")}).SetupWithManager(mgr)
	}))
}

// installHubPolicy creates the muster-hub chart's namespace and install.yaml and waits until the
// API server enforces its admission policies.
func installHubPolicy(cfg *rest.Config) error {
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	objs, err := charts.Render(charts.Hub, nil)
	if err != nil {
		return err
	}
	ctx := context.Background()
	for _, u := range objs.From("templates/namespace.yaml", "templates/install.yaml") {
		if err := c.Create(ctx, u.Unstructured); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	// Policies take effect once the API server has loaded them: a dry-run registration of
	// an accepted cluster by a bootstrap token is refused from then on.
	boot := rest.CopyConfig(cfg)
	boot.Impersonate = rest.ImpersonationConfig{UserName: "system:bootstrap:policy", Groups: []string{identity.BootstrapGroup}}
	bc, err := client.New(boot, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "policy-probe"}, Spec: musterv1.MemberClusterSpec{Accepted: true}}
		err := bc.Create(ctx, mc, client.DryRunAll)
		return apierrors.IsInvalid(err) || (apierrors.IsForbidden(err) && !isRBACDenial(err)), nil
	})
}

// isRBACDenial tells RBAC's Forbidden (the binding not yet loaded) from a policy's.
func isRBACDenial(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status) && bytes.Contains([]byte(status.Status().Message), []byte("cannot create resource"))
}
