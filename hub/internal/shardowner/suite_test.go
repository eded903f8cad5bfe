package shardowner_test

import (
	"os"
	"testing"

	"github.com/musterhq/muster/internal/testing/envtest"
)

var env *envtest.Environment

// TestMain starts a real API server; the tests call the opening directly, with no manager.
func TestMain(m *testing.M) {
	os.Exit(envtest.MainWith(m, &env, nil))
}
