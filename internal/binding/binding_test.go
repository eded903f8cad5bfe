package binding_test

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/identity"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/binding"
	"github.com/musterhq/muster/internal/testing/builders"
)

func newJoinID(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// agentCSR is what cluster's agent sends for join joinID.
func agentCSR(t *testing.T, cluster, joinID string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	request, err := identity.NewAgentRequest(cluster, joinID, builders.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	return builders.MakeCSR("agent-").Request(request).Obj()
}

// memberCluster creates an accepted MemberCluster named name and returns it as read back.
func memberCluster(t *testing.T, name string) *musterv1.MemberCluster {
	t.Helper()
	mc := builders.MakeMemberCluster(name).Accepted().Obj()
	mc.UID = ""
	if err := env.Client.Create(t.Context(), mc); err != nil {
		t.Fatal(err)
	}
	return mc
}

func read(t *testing.T, name string) *musterv1.MemberCluster {
	t.Helper()
	var mc musterv1.MemberCluster
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: name}, &mc); err != nil {
		t.Fatal(err)
	}
	return &mc
}

// TestBindRecordsTheRequestsKeyAndJoin: the cluster's stored binding is the key and join
// of the request about to be approved, and binding it again writes nothing.
func TestBindRecordsTheRequestsKeyAndJoin(t *testing.T) {
	mc := memberCluster(t, "bind-new")
	joinID := newJoinID(t)
	csr := agentCSR(t, "bind-new", joinID)
	want, err := identity.ParseAgentCSR(csr)
	if err != nil {
		t.Fatal(err)
	}
	if err := binding.Bind(t.Context(), env.Client, mc, csr); err != nil {
		t.Fatal(err)
	}
	got := read(t, "bind-new")
	if got.Annotations[identity.AgentKeyAnnotation] != want.Key || got.Annotations[identity.AgentJoinAnnotation] != joinID {
		t.Fatalf("stored binding %v, want key %s and join %s", got.Annotations, want.Key, joinID)
	}
	if !got.Spec.Accepted {
		t.Error("binding changed the acceptance")
	}
	version := got.ResourceVersion
	if err := binding.Bind(t.Context(), env.Client, got, csr); err != nil {
		t.Fatal(err)
	}
	if again := read(t, "bind-new"); again.ResourceVersion != version {
		t.Errorf("binding the same request again wrote the cluster: %s → %s", version, again.ResourceVersion)
	}
}

// TestARejoinMovesTheBinding: a new join of the same cluster (a new key, a new join id)
// replaces the binding of the old one.
func TestARejoinMovesTheBinding(t *testing.T) {
	mc := memberCluster(t, "bind-rejoin")
	if err := binding.Bind(t.Context(), env.Client, mc, agentCSR(t, "bind-rejoin", newJoinID(t))); err != nil {
		t.Fatal(err)
	}
	second := newJoinID(t)
	csr := agentCSR(t, "bind-rejoin", second)
	if err := binding.Bind(t.Context(), env.Client, read(t, "bind-rejoin"), csr); err != nil {
		t.Fatal(err)
	}
	key, err := identity.RequestKey(csr)
	if err != nil {
		t.Fatal(err)
	}
	got := read(t, "bind-rejoin")
	if got.Annotations[identity.AgentJoinAnnotation] != second || got.Annotations[identity.AgentKeyAnnotation] != key {
		t.Errorf("binding after the rejoin: %v, want join %s and key %s", got.Annotations, second, key)
	}
}

// TestTwoJoinsRacingCannotBothBind: two approvers that read the unbound cluster at the
// same time each bind their own join; the second write fails on the optimistic lock
// instead of replacing the first, so only one join is ever approved.
func TestTwoJoinsRacingCannotBothBind(t *testing.T) {
	memberCluster(t, "bind-race")
	first, second := read(t, "bind-race"), read(t, "bind-race")
	winner := newJoinID(t)
	if err := binding.Bind(t.Context(), env.Client, first, agentCSR(t, "bind-race", winner)); err != nil {
		t.Fatal(err)
	}
	err := binding.Bind(t.Context(), env.Client, second, agentCSR(t, "bind-race", newJoinID(t)))
	if !apierrors.IsConflict(err) {
		t.Fatalf("the second bind: %v, want a conflict", err)
	}
	if !strings.Contains(err.Error(), "bind-race") {
		t.Errorf("the error %q does not name the cluster", err)
	}
	if got := read(t, "bind-race").Annotations[identity.AgentJoinAnnotation]; got != winner {
		t.Errorf("stored join %s, want the first's %s", got, winner)
	}
}

// TestBindRefusesWhatIsNoAgentRequestForTheCluster: a request that is no agent identity,
// or is another cluster's, binds nothing.
func TestBindRefusesWhatIsNoAgentRequestForTheCluster(t *testing.T) {
	mc := memberCluster(t, "bind-refuse")
	version := mc.ResourceVersion
	serverCSR := agentCSR(t, "bind-refuse", newJoinID(t))
	serverCSR.Spec.SignerName = certificatesv1.KubeletServingSignerName
	garbled := agentCSR(t, "bind-refuse", newJoinID(t))
	garbled.Spec.Request = []byte("not a PEM request")
	for what, csr := range map[string]*certificatesv1.CertificateSigningRequest{
		"another signer":          serverCSR,
		"an unreadable request":   garbled,
		"another cluster's agent": agentCSR(t, "bind-other", newJoinID(t)),
	} {
		if err := binding.Bind(t.Context(), env.Client, mc, csr); err == nil {
			t.Errorf("%s: bound", what)
		}
	}
	if got := read(t, "bind-refuse"); got.ResourceVersion != version || got.Annotations[identity.AgentKeyAnnotation] != "" {
		t.Errorf("a refused request changed the cluster: %v", got.Annotations)
	}
}

// TestBindingADeletedClusterFails: a cluster deleted after it was read is not recreated
// by the bind, which reports it.
func TestBindingADeletedClusterFails(t *testing.T) {
	mc := memberCluster(t, "bind-deleted")
	if err := env.Client.Delete(t.Context(), mc.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	err := binding.Bind(t.Context(), env.Client, mc, agentCSR(t, "bind-deleted", newJoinID(t)))
	if !apierrors.IsNotFound(err) {
		t.Errorf("Bind on a deleted cluster: %v, want not found", err)
	}
}
