package health_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/musterhq/muster/api/scheme"
	"github.com/musterhq/muster/e2e/envtest"
	"github.com/musterhq/muster/hub/health"
)

var (
	env   *envtest.Environment
	clock = clocktesting.NewFakePassiveClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
)

const grace = 40 * time.Second

// TestMain runs the health reconciler, on a clock the tests move, against a real API server.
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
	r := &health.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("test"), Clock: clock, GracePeriod: grace}
	if err := r.SetupWithManager(mgr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() { _ = mgr.Start(ctx) }()
	return m.Run()
}
