package registration_test

import (
	"os"
	"testing"

	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/musterhq/muster/e2e/envtest"
	"github.com/musterhq/muster/hub/registration"
)

var env *envtest.Environment

// TestMain runs the registration reconciler and the CSR approver against a real API
// server for the whole package.
func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, func(mgr ctrl.Manager) error {
		cs, err := kubernetes.NewForConfig(mgr.GetConfig())
		if err != nil {
			return err
		}
		if err := (&registration.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("test")}).SetupWithManager(mgr); err != nil {
			return err
		}
		return (&registration.Approver{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Clientset: cs, Recorder: mgr.GetEventRecorder("test")}).SetupWithManager(mgr)
	}))
}
