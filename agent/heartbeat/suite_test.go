package heartbeat_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/musterhq/muster/e2e/envtest"
)

// env is a real kube-apiserver playing the hub, with RBAC enforced, so a renewer
// impersonating an agent is refused what its Role does not grant.
var env *envtest.Environment

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	var err error
	if env, err = envtest.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	return m.Run()
}
