package registration_test

import (
	"os"
	"testing"

	"github.com/musterhq/muster/internal/testing/envtest"
)

// bootstrapToken is the join line's token the API server knows, as the hub knows the
// token `musterctl token create` made.
const bootstrapToken = "0123456789abcdef0123456789abcdef"

var env *envtest.Environment

// TestMain starts one real API server that is both the hub (MemberClusters, certificate
// requests) and the member (the agent's Secrets, kube-system). No signer runs: the tests
// approve, deny and issue certificates themselves, as the hub's approver and signer do.
func TestMain(m *testing.M) {
	os.Exit(envtest.MainWith(m, &env, nil, envtest.WithToken(bootstrapToken, "system:bootstrap:test", "system:masters")))
}
