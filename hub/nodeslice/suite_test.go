package nodeslice_test

import (
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/musterhq/muster/hub/inventory"
	"github.com/musterhq/muster/hub/nodeslice"
	"github.com/musterhq/muster/internal/testing/envtest"
)

var (
	env *envtest.Environment
	inv = inventory.New()
)

// TestMain runs the NodeSlice reconciler against a real API server, loading one inventory
// that the tests read; each test uses clusters of its own.
func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, func(mgr ctrl.Manager) error {
		return (&nodeslice.Reconciler{Client: mgr.GetClient(), Inventory: inv}).SetupWithManager(mgr)
	}))
}
