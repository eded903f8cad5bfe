package health_test

import (
	"os"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/musterhq/muster/hub/health"
	"github.com/musterhq/muster/internal/testing/envtest"
)

var (
	env   *envtest.Environment
	clock = clocktesting.NewFakePassiveClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
)

const grace = 40 * time.Second

// TestMain runs the health reconciler, on a clock the tests move, against a real API server.
func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, func(mgr ctrl.Manager) error {
		r := &health.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("test"), Clock: clock, GracePeriod: grace, HubVersion: hubVersion}
		return r.SetupWithManager(mgr)
	}))
}
