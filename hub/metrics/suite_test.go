package metrics_test

import (
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/musterhq/muster/hub/metrics"
	"github.com/musterhq/muster/internal/testing/envtest"
)

const leaseName = "muster-agent"

// hubSaw is when the tests say the hub saw a cluster's renewals, as the health
// controller would.
var hubSaw = &sawRenewals{saw: map[string]time.Time{}}

type sawRenewals struct {
	mu  sync.Mutex
	saw map[string]time.Time
}

func (s *sawRenewals) set(cluster string, renew, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saw[fmt.Sprint(cluster, "@", renew.UnixMicro())] = at
}

func (s *sawRenewals) at(cluster string, renew time.Time) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.saw[fmt.Sprint(cluster, "@", renew.UnixMicro())]
	return at, ok
}

var (
	env   *envtest.Environment
	clock = clocktesting.NewFakeClock(time.Now().Truncate(time.Second))
)

// TestMain registers the fleet gauges over a real manager's cache, on a clock the tests
// set; no controller runs, the tests write the objects the gauges read.
func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, func(mgr ctrl.Manager) error {
		return metrics.RegisterFleet(mgr.GetClient(), leaseName, clock.Now, hubSaw.at)
	}))
}
