package registration_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/musterhq/muster/api/scheme"
	"github.com/musterhq/muster/e2e/envtest"
	"github.com/musterhq/muster/hub/registration"
)

var env *envtest.Environment

// TestMain runs the registration reconciler and the CSR approver against a real API
// server for the whole package.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	env, err = envtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: scheme.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := (&registration.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("test")}).SetupWithManager(mgr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := (&registration.Approver{Client: mgr.GetClient(), Clientset: cs}).SetupWithManager(mgr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() { _ = mgr.Start(ctx) }()
	return m.Run()
}
