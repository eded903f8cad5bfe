package health_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"

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
	err = env.StartManager(ctx, func(mgr ctrl.Manager) error {
		r := &health.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("test"), Clock: clock, GracePeriod: grace}
		return r.SetupWithManager(mgr)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
