package memberid_test

import (
	"os"
	"testing"

	"github.com/musterhq/muster/internal/testing/envtest"
)

var env *envtest.Environment

// TestMain starts a real API server, the member whose ID the tests read.
func TestMain(m *testing.M) {
	os.Exit(envtest.MainWith(m, &env, nil))
}
