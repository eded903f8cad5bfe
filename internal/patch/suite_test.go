package patch_test

import (
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/musterhq/muster/internal/testing/envtest"
)

var env *envtest.Environment

// TestMain starts a real API server; the tests write to it directly, with no controller.
func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, func(ctrl.Manager) error { return nil }))
}
