package nodeslice_test

import (
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/hub/inventory"
	"github.com/musterhq/muster/hub/nodeslice"
	"github.com/musterhq/muster/internal/testing/envtest"
)

var (
	env *envtest.Environment
	inv = inventory.New()
)

// TestMain runs the NodeSlice loader against a real API server, loading one inventory
// that the tests read; each test uses clusters of its own.
func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, func(mgr ctrl.Manager) error {
		slices, err := client.NewWithWatch(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
		if err != nil {
			return err
		}
		return (&nodeslice.Loader{Client: slices, Inventory: inv}).SetupWithManager(mgr)
	}))
}
