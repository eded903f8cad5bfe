package registration_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/identity"
	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/registration"
	"github.com/musterhq/muster/internal/binding"
	"github.com/musterhq/muster/internal/testing/builders"
)

// timeout bounds every wait. make test runs these tests at low priority beside the kind
// suite, where an event the hub records (its broadcaster writes them in the background)
// once took longer than 10 s to be listable.
const timeout = 30 * time.Second

func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func newCluster(t *testing.T, name string, accepted bool) *musterv1.MemberCluster {
	t.Helper()
	mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: musterv1.MemberClusterSpec{Accepted: accepted}}
	if err := env.Client.Create(t.Context(), mc); err != nil {
		t.Fatal(err)
	}
	return mc
}

func getCluster(ctx context.Context, name string) (*musterv1.MemberCluster, error) {
	var mc musterv1.MemberCluster
	err := env.Client.Get(ctx, types.NamespacedName{Name: name}, &mc)
	return &mc, err
}

func acceptedCondition(ctx context.Context, name string) (*metav1.Condition, error) {
	mc, err := getCluster(ctx, name)
	if err != nil {
		return nil, err
	}
	return meta.FindStatusCondition(mc.Status.Conditions, musterv1.MemberClusterAccepted), nil
}

func exists(ctx context.Context, obj client.Object, namespace, name string) bool {
	err := env.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, obj)
	return err == nil
}

// newJoinID is a fresh join id, as an agent makes for each join.
func newJoinID(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// asUser is a clientset that impersonates a user, to make CSRs with a given requester.
func asUser(t *testing.T, user string, groups ...string) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// agentCSR asks for cluster's agent identity with a fresh key, for a new join.
func agentCSR(t *testing.T, cluster string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	return agentCSRFor(t, cluster, newJoinID(t), builders.NewKey())
}

// agentCSRFor asks for a certificate of join joinID of cluster's agent for key, lasting
// an hour, as the agent does.
func agentCSRFor(t *testing.T, cluster, joinID string, key *ecdsa.PrivateKey) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	request, err := identity.NewAgentRequest(cluster, joinID, key)
	if err != nil {
		t.Fatal(err)
	}
	return builders.MakeCSR("agent-").Label(musterv1.ClusterNameLabel, cluster).Request(request).Obj()
}

func approved(ctx context.Context, name string) (bool, error) {
	var csr certificatesv1.CertificateSigningRequest
	if err := env.Client.Get(ctx, types.NamespacedName{Name: name}, &csr); err != nil {
		return false, err
	}
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved && c.Status == corev1.ConditionTrue {
			return true, nil
		}
	}
	return false, nil
}

// agentGroups are the groups of a certificate of join joinID of cluster's agent.
func agentGroups(cluster, joinID string) []string {
	return []string{identity.MembersGroup, identity.ClusterGroup(cluster), identity.JoinGroup(cluster, joinID)}
}

// asAgent is a clientset acting as cluster's agent authenticated with a certificate of join
// joinID for holder, as the API server would record it, and a CSR annotation naming that
// certificate.
func asAgent(t *testing.T, cluster, joinID string, holder *ecdsa.PrivateKey) (kubernetes.Interface, map[string]string) {
	t.Helper()
	der := builders.SelfSigned(holder, identity.AgentUser(cluster))
	sum := sha256.Sum256(der)
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: identity.AgentUser(cluster), Groups: agentGroups(cluster, joinID),
		Extra: map[string][]string{"authentication.kubernetes.io/credential-id": {"X509SHA256=" + hex.EncodeToString(sum[:])}},
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, map[string]string{identity.CurrentCertificateAnnotation: builders.PEMCertificate(der)}
}

// certificateClient is a hub client authenticated, like a real agent, by a client
// certificate for cluster's agent of join joinID, signed by the API server's client CA.
func certificateClient(t *testing.T, cluster, joinID string) client.Client {
	t.Helper()
	cfg, err := env.UserConfig(identity.AgentUser(cluster), agentGroups(cluster, joinID)...)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fingerprint names key as the hub does.
func fingerprint(key *ecdsa.PrivateKey) string {
	return identity.KeyFingerprint(builders.SPKI(key))
}

// boundCluster is an accepted cluster whose identity is bound to key and whose current
// join is the returned one, with its RBAC.
func boundCluster(t *testing.T, name string, key *ecdsa.PrivateKey) string {
	t.Helper()
	joinID := newJoinID(t)
	mc := &musterv1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
			identity.AgentKeyAnnotation: fingerprint(key), identity.AgentJoinAnnotation: joinID,
		}},
		Spec: musterv1.MemberClusterSpec{Accepted: true},
	}
	if err := env.Client.Create(t.Context(), mc); err != nil {
		t.Fatal(err)
	}
	eventually(t, name+"'s RBAC", func(ctx context.Context) (bool, error) {
		return bindsJoin(ctx, name, joinID), nil
	})
	return joinID
}

// bindsJoin says whether both of cluster's bindings name exactly the group of join joinID.
func bindsJoin(ctx context.Context, cluster, joinID string) bool {
	var rb rbacv1.RoleBinding
	var crb rbacv1.ClusterRoleBinding
	if !exists(ctx, &rb, musterv1.MemberNamespace(cluster), "muster:agent") || !exists(ctx, &crb, "", registration.ClusterRoleName(cluster)) {
		return false
	}
	want := identity.JoinGroup(cluster, joinID)
	only := func(s []rbacv1.Subject) bool {
		return len(s) == 1 && s[0].Kind == rbacv1.GroupKind && s[0].Name == want
	}
	return only(rb.Subjects) && only(crb.Subjects)
}

// asBootstrap is a clientset of a Muster bootstrap token, with the RBAC and admission
// policy `musterctl init` installs (see TestMain); extraGroups bind it to a cluster.
func asBootstrap(t *testing.T, extraGroups ...string) kubernetes.Interface {
	t.Helper()
	return asUser(t, "system:bootstrap:abcdef", append([]string{identity.BootstrapGroup, "system:bootstrappers"}, extraGroups...)...)
}

// bootstrapClient is asBootstrap as a controller-runtime client, for MemberClusters.
func bootstrapClient(t *testing.T, extraGroups ...string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:bootstrap:abcdef", Groups: append([]string{identity.BootstrapGroup, "system:bootstrappers"}, extraGroups...)}
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func boundKey(ctx context.Context, cluster string) (string, error) {
	mc, err := getCluster(ctx, cluster)
	return mc.Annotations[identity.AgentKeyAnnotation], err
}

func deniedFor(ctx context.Context, name string) (string, error) {
	var csr certificatesv1.CertificateSigningRequest
	if err := env.Client.Get(ctx, types.NamespacedName{Name: name}, &csr); err != nil {
		return "", err
	}
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateDenied && c.Status == corev1.ConditionTrue {
			return c.Reason, nil
		}
	}
	return "", nil
}

func createCSR(t *testing.T, cs kubernetes.Interface, csr *certificatesv1.CertificateSigningRequest) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	created, err := cs.CertificatesV1().CertificateSigningRequests().Create(t.Context(), csr, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating CSR: %v", err)
	}
	return created
}

// adminApprove approves a pending request as `musterctl accept` does: decide, bind, approve.
func adminApprove(t *testing.T, name string, rekey bool) {
	t.Helper()
	ctx := t.Context()
	var csr certificatesv1.CertificateSigningRequest
	if err := env.Client.Get(ctx, types.NamespacedName{Name: name}, &csr); err != nil {
		t.Fatal(err)
	}
	req, err := identity.ParseAgentCSR(&csr)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := getCluster(ctx, req.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	v := identity.Decide(&csr, identity.Facts{Accepted: mc.Spec.Accepted, ByAdmin: true, Rekey: rekey,
		BoundKey: mc.Annotations[identity.AgentKeyAnnotation], JoinID: mc.Annotations[identity.AgentJoinAnnotation]})
	if v.Decision != identity.Approve {
		t.Fatalf("musterctl accept would decide %s (%s) for %s, want Approve", v.Decision, v.Why, name)
	}
	if err := binding.Bind(ctx, env.Client, mc, &csr); err != nil {
		t.Fatal(err)
	}
	csr.Status.Conditions = append(csr.Status.Conditions, identity.ApprovalCondition(musterv1.CSRReasonAcceptedByMusterctl, v.Why))
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, &csr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// setAccepted accepts or denies the cluster as musterctl does.
func setAccepted(t *testing.T, name string, accepted bool) {
	t.Helper()
	mc, err := getCluster(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFromWithOptions(mc.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if accepted {
		identity.AcceptCluster(mc)
	} else {
		identity.DenyCluster(mc)
	}
	if err := env.Client.Patch(t.Context(), mc, patch); err != nil {
		t.Fatal(err)
	}
}

// expectEvent waits for an event with reason about the object named regarding whose note
// contains note.
func expectEvent(t *testing.T, regarding, reason, note string) {
	t.Helper()
	eventually(t, fmt.Sprintf("a %s event on %s", reason, regarding), func(ctx context.Context) (bool, error) {
		var evs eventsv1.EventList
		if err := env.Client.List(ctx, &evs); err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.Regarding.Name == regarding && e.Reason == reason && strings.Contains(e.Note, note) {
				return true, nil
			}
		}
		return false, nil
	})
}

// approverPassed waits until the approver has decided every request created before the
// call: it creates a request for cluster that the approver denies at once (it asks for a
// year) and waits for that denial. The approver has one worker and its queue is first in,
// first out, and the cache sees requests in the order they were created, so by then it has
// decided the earlier ones; a request it left alone was left alone by a decision, not for
// lack of time.
func approverPassed(t *testing.T, cluster string) {
	t.Helper()
	req := agentCSR(t, cluster)
	year := int32(365 * 24 * 3600)
	req.Spec.ExpirationSeconds = &year
	marker := createCSR(t, asBootstrap(t), req)
	eventually(t, "the approver to deny the marker request "+marker.Name, func(ctx context.Context) (bool, error) {
		reason, err := deniedFor(ctx, marker.Name)
		return reason == musterv1.ReasonCertificateLifetime, err
	})
}
