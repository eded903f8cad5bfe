package heartbeat_test

import (
	"os"
	"testing"

	"github.com/musterhq/muster/internal/testing/envtest"
)

// env is a real kube-apiserver playing the hub, with RBAC enforced, so a renewer
// impersonating an agent is refused what its Role does not grant.
var env *envtest.Environment

func TestMain(m *testing.M) { os.Exit(envtest.MainWith(m, &env, nil)) }
