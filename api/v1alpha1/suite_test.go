package v1alpha1_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/musterhq/muster/internal/testing/envtest"
)

// env is a real kube-apiserver with Muster's CRDs, shared by this package's tests; each
// test works in namespaces of its own.
var env *envtest.Environment

func TestMain(m *testing.M) {
	var err error
	env, err = envtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping envtest:", err)
	}
	os.Exit(code)
}
