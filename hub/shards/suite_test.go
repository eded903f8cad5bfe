package shards_test

import (
	"os"
	"testing"

	"github.com/musterhq/muster/internal/testing/envtest"
)

var env *envtest.Environment

// TestMain starts a real API server for the tests that find, check and release Works and
// read namespaces; the pure tests do not use it.
func TestMain(m *testing.M) {
	os.Exit(envtest.MainWith(m, &env, nil))
}
