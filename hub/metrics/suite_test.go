package metrics_test

import (
	"os"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/musterhq/muster/hub/metrics"
	"github.com/musterhq/muster/internal/testing/envtest"
)

const leaseName = "muster-agent"

var (
	env   *envtest.Environment
	clock = clocktesting.NewFakeClock(time.Now().Truncate(time.Second))
)

// TestMain registers the fleet gauges over a real manager's cache, on a clock the tests
// set; no controller runs, the tests write the objects the gauges read.
func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, func(mgr ctrl.Manager) error {
		return metrics.RegisterFleet(mgr.GetClient(), leaseName, clock.Now)
	}))
}
