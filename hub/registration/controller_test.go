package registration_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/registration"
)

const timeout = 10 * time.Second

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

func acceptedCondition(ctx context.Context, name string) (*metav1.Condition, error) {
	var mc musterv1.MemberCluster
	if err := env.Client.Get(ctx, types.NamespacedName{Name: name}, &mc); err != nil {
		return nil, err
	}
	return meta.FindStatusCondition(mc.Status.Conditions, musterv1.MemberClusterAccepted), nil
}

func exists(ctx context.Context, obj client.Object, namespace, name string) bool {
	err := env.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, obj)
	return err == nil
}

func TestUnacceptedClusterGetsNoNamespaceOrRBAC(t *testing.T) {
	newCluster(t, "pending", false)
	eventually(t, "Accepted=False", func(ctx context.Context) (bool, error) {
		c, err := acceptedCondition(ctx, "pending")
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == musterv1.MemberClusterReasonNotAccepted, err
	})
	ctx := t.Context()
	if exists(ctx, &corev1.Namespace{}, "", musterv1.MemberNamespace("pending")) {
		t.Error("an unaccepted cluster got its hub namespace")
	}
	if exists(ctx, &rbacv1.ClusterRoleBinding{}, "", registration.ClusterRoleName("pending")) {
		t.Error("an unaccepted cluster got a ClusterRoleBinding")
	}
}

func TestAcceptedClusterGetsScopedRBAC(t *testing.T) {
	newCluster(t, "alpha", true)
	ns := musterv1.MemberNamespace("alpha")
	eventually(t, "namespace, RBAC and Accepted=True", func(ctx context.Context) (bool, error) {
		c, err := acceptedCondition(ctx, "alpha")
		return err == nil && c != nil && c.Status == metav1.ConditionTrue &&
			exists(ctx, &corev1.Namespace{}, "", ns) &&
			exists(ctx, &rbacv1.RoleBinding{}, ns, "muster:agent") &&
			exists(ctx, &rbacv1.ClusterRoleBinding{}, "", registration.ClusterRoleName("alpha")), nil
	})
	ctx := t.Context()
	var crb rbacv1.ClusterRoleBinding
	if err := env.Client.Get(ctx, types.NamespacedName{Name: registration.ClusterRoleName("alpha")}, &crb); err != nil {
		t.Fatal(err)
	}
	if len(crb.Subjects) != 1 || crb.Subjects[0].Kind != rbacv1.GroupKind || crb.Subjects[0].Name != musterv1.ClusterGroup("alpha") {
		t.Errorf("ClusterRoleBinding subjects = %+v, want only group %s", crb.Subjects, musterv1.ClusterGroup("alpha"))
	}
	var cr rbacv1.ClusterRole
	if err := env.Client.Get(ctx, types.NamespacedName{Name: registration.ClusterRoleName("alpha")}, &cr); err != nil {
		t.Fatal(err)
	}
	for _, rule := range cr.Rules {
		if slices.Contains(rule.Resources, "memberclusters") || slices.Contains(rule.Resources, "memberclusters/status") {
			if !slices.Equal(rule.ResourceNames, []string{"alpha"}) {
				t.Errorf("rule %+v reaches MemberClusters other than alpha", rule)
			}
		}
	}
}

func TestDeniedClusterLosesItsBindings(t *testing.T) {
	mc := newCluster(t, "beta", true)
	ns := musterv1.MemberNamespace("beta")
	eventually(t, "bindings", func(ctx context.Context) (bool, error) {
		return exists(ctx, &rbacv1.RoleBinding{}, ns, "muster:agent") && exists(ctx, &rbacv1.ClusterRoleBinding{}, "", registration.ClusterRoleName("beta")), nil
	})
	patch := client.MergeFrom(mc.DeepCopy())
	mc.Spec.Accepted = false
	if err := env.Client.Patch(t.Context(), mc, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, "bindings gone and Accepted=False", func(ctx context.Context) (bool, error) {
		c, err := acceptedCondition(ctx, "beta")
		return err == nil && c.Status == metav1.ConditionFalse &&
			!exists(ctx, &rbacv1.RoleBinding{}, ns, "muster:agent") &&
			!exists(ctx, &rbacv1.ClusterRoleBinding{}, "", registration.ClusterRoleName("beta")), nil
	})
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

func agentCSR(t *testing.T, cluster string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	return agentCSRFor(t, cluster, newKey(t))
}

func agentCSRFor(t *testing.T, cluster string, key *ecdsa.PrivateKey) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{
		CommonName: musterv1.AgentUser(cluster), Organization: []string{musterv1.MembersGroup, musterv1.ClusterGroup(cluster)},
	}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "agent-", Labels: map[string]string{musterv1.ClusterNameLabel: cluster}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature},
		},
	}
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

// asAgent is a clientset acting as cluster's agent authenticated with a certificate for
// holder, as the API server would record it, and a CSR annotation naming that certificate.
func asAgent(t *testing.T, cluster string, holder *ecdsa.PrivateKey) (kubernetes.Interface, map[string]string) {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: musterv1.AgentUser(cluster)},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &holder.PublicKey, holder)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(der)
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: musterv1.AgentUser(cluster), Groups: []string{musterv1.MembersGroup, musterv1.ClusterGroup(cluster)},
		Extra: map[string][]string{"authentication.kubernetes.io/credential-id": {"X509SHA256=" + hex.EncodeToString(sum[:])}},
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, map[string]string{musterv1.CurrentCertificateAnnotation: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func fingerprint(t *testing.T, key *ecdsa.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return musterv1.KeyFingerprint(der)
}

// boundCluster is an accepted cluster whose identity is bound to key, with its RBAC.
func boundCluster(t *testing.T, name string, key *ecdsa.PrivateKey) {
	t.Helper()
	mc := &musterv1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{registration.AgentKeyAnnotation: fingerprint(t, key)}},
		Spec:       musterv1.MemberClusterSpec{Accepted: true},
	}
	if err := env.Client.Create(t.Context(), mc); err != nil {
		t.Fatal(err)
	}
	eventually(t, name+"'s RBAC", func(ctx context.Context) (bool, error) {
		return exists(ctx, &rbacv1.ClusterRoleBinding{}, "", registration.ClusterRoleName(name)), nil
	})
}

func asBootstrap(t *testing.T, extraGroups ...string) kubernetes.Interface {
	t.Helper()
	boot := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "test-bootstrap"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node-bootstrapper"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: registration.BootstrapGroup}},
	}
	if err := env.Client.Create(t.Context(), boot); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return asUser(t, "system:bootstrap:abcdef", append([]string{registration.BootstrapGroup, "system:bootstrappers"}, extraGroups...)...)
}

func boundKey(ctx context.Context, cluster string) (string, error) {
	var mc musterv1.MemberCluster
	err := env.Client.Get(ctx, types.NamespacedName{Name: cluster}, &mc)
	return mc.Annotations[registration.AgentKeyAnnotation], err
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

func TestRotationByTheCurrentHolderIsApprovedAndMovesTheKey(t *testing.T) {
	current := newKey(t)
	boundCluster(t, "gamma", current)
	agent, cert := asAgent(t, "gamma", current)
	next := newKey(t)
	req := agentCSRFor(t, "gamma", next)
	req.Annotations = cert
	renewal := createCSR(t, agent, req)
	eventually(t, "the renewal to be approved", func(ctx context.Context) (bool, error) { return approved(ctx, renewal.Name) })
	if got, err := boundKey(t.Context(), "gamma"); err != nil || got != fingerprint(t, next) {
		t.Errorf("bound key after rotation = %q (%v), want the new key %s", got, err, fingerprint(t, next))
	}

	// The old certificate no longer rotates: its key is not the cluster's any more.
	stale, cert := asAgent(t, "gamma", current)
	req = agentCSR(t, "gamma")
	req.Annotations = cert
	forged := createCSR(t, stale, req)
	eventually(t, "the rotation with the old certificate to be denied", func(ctx context.Context) (bool, error) {
		reason, err := deniedFor(ctx, forged.Name)
		return reason == musterv1.ReasonAgentKeyMismatch, err
	})

	// A bootstrap join with the cluster's bound key still waits for musterctl accept.
	join := createCSR(t, asBootstrap(t), agentCSRFor(t, "gamma", next))
	time.Sleep(2 * time.Second)
	if ok, err := approved(t.Context(), join.Name); err != nil || ok {
		t.Errorf("a bootstrap join was approved without musterctl accept (approved=%v, err=%v)", ok, err)
	}
}

// The takeover of issue 14: another cluster's bootstrap token asks for an accepted, joined
// cluster's identity with its own key.
func TestTakeoverJoinIsDeniedWithAnEvent(t *testing.T) {
	owner := newKey(t)
	boundCluster(t, "zeta", owner)
	takeover := createCSR(t, asBootstrap(t), agentCSR(t, "zeta"))
	eventually(t, "the takeover to be denied", func(ctx context.Context) (bool, error) {
		reason, err := deniedFor(ctx, takeover.Name)
		return reason == musterv1.ReasonAgentKeyMismatch, err
	})
	eventually(t, "a warning event on zeta", func(ctx context.Context) (bool, error) {
		var evs eventsv1.EventList
		if err := env.Client.List(ctx, &evs); err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.Regarding.Name == "zeta" && e.Reason == musterv1.ReasonAgentKeyMismatch && strings.Contains(e.Note, takeover.Name) {
				return true, nil
			}
		}
		return false, nil
	})
	// What musterctl accept decides for it, even when run again: refuse.
	var csr certificatesv1.CertificateSigningRequest
	if err := env.Client.Get(t.Context(), types.NamespacedName{Name: takeover.Name}, &csr); err != nil {
		t.Fatal(err)
	}
	csr.Status = certificatesv1.CertificateSigningRequestStatus{}
	if d, why := registration.Decide(&csr, registration.Facts{Accepted: true, ByAdmin: true, BoundKey: fingerprint(t, owner)}); d != registration.Deny {
		t.Errorf("musterctl accept would decide %s (%s) for the takeover, want Deny", d, why)
	}
	if got, _ := boundKey(t.Context(), "zeta"); got != fingerprint(t, owner) {
		t.Errorf("bound key = %q, want the owner's", got)
	}
}

// A token bound to one cluster cannot ask for another's identity, bound or not.
func TestClusterBoundTokenIsDeniedForAnotherName(t *testing.T) {
	newCluster(t, "eta", true)
	csr := createCSR(t, asBootstrap(t, registration.TokenClusterGroupPrefix+"theta"), agentCSR(t, "eta"))
	eventually(t, "the request to be denied", func(ctx context.Context) (bool, error) {
		reason, err := deniedFor(ctx, csr.Name)
		return reason == musterv1.ReasonAgentKeyMismatch, err
	})
}

// An administrator replacing a lost key (musterctl accept --rekey) binds the new key; the
// lost key's certificate can then no longer rotate, and the new agent can.
func TestRekeyReplacesTheBoundKey(t *testing.T) {
	lost := newKey(t)
	boundCluster(t, "iota", lost)
	ctx := t.Context()
	fresh := newKey(t)
	join := createCSR(t, asBootstrap(t), agentCSRFor(t, "iota", fresh))
	// The hub denies the unknown key on its own; an administrator's rekey is what lets a
	// new key in, decided on the request as it was pending.
	var csr certificatesv1.CertificateSigningRequest
	if err := env.Client.Get(ctx, types.NamespacedName{Name: join.Name}, &csr); err != nil {
		t.Fatal(err)
	}
	csr.Status = certificatesv1.CertificateSigningRequestStatus{}
	var mc musterv1.MemberCluster
	if err := env.Client.Get(ctx, types.NamespacedName{Name: "iota"}, &mc); err != nil {
		t.Fatal(err)
	}
	facts := registration.Facts{Accepted: true, ByAdmin: true, BoundKey: mc.Annotations[registration.AgentKeyAnnotation]}
	if d, _ := registration.Decide(&csr, facts); d != registration.Deny {
		t.Fatalf("without --rekey the new key is %s, want Deny", d)
	}
	facts.Rekey = true
	if d, why := registration.Decide(&csr, facts); d != registration.Approve {
		t.Fatalf("with --rekey the new key is %s (%s), want Approve", d, why)
	}
	if err := registration.BindKey(ctx, env.Client, &mc, &csr); err != nil {
		t.Fatal(err)
	}
	if got, _ := boundKey(ctx, "iota"); got != fingerprint(t, fresh) {
		t.Fatalf("bound key after rekey = %q, want %s", got, fingerprint(t, fresh))
	}

	oldAgent, oldCert := asAgent(t, "iota", lost)
	req := agentCSR(t, "iota")
	req.Annotations = oldCert
	old := createCSR(t, oldAgent, req)
	newAgent, newCert := asAgent(t, "iota", fresh)
	req = agentCSR(t, "iota")
	req.Annotations = newCert
	renewal := createCSR(t, newAgent, req)
	eventually(t, "the lost key's rotation denied and the new key's approved", func(ctx context.Context) (bool, error) {
		reason, err := deniedFor(ctx, old.Name)
		if err != nil || reason != musterv1.ReasonAgentKeyMismatch {
			return false, err
		}
		return approved(ctx, renewal.Name)
	})
}

func TestAnotherClustersAgentCannotGetACertificate(t *testing.T) {
	newCluster(t, "delta", true)
	newCluster(t, "epsilon", true)
	eventually(t, "RBAC of both", func(ctx context.Context) (bool, error) {
		return exists(ctx, &rbacv1.ClusterRoleBinding{}, "", registration.ClusterRoleName("delta")) &&
			exists(ctx, &rbacv1.ClusterRoleBinding{}, "", registration.ClusterRoleName("epsilon")), nil
	})
	ctx := t.Context()
	// delta's agent asks for epsilon's identity.
	csr, err := asUser(t, musterv1.AgentUser("delta"), musterv1.MembersGroup, musterv1.ClusterGroup("delta")).
		CertificatesV1().CertificateSigningRequests().Create(ctx, agentCSR(t, "epsilon"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if ok, err := approved(ctx, csr.Name); err != nil || ok {
		t.Errorf("delta's agent got epsilon's identity approved (approved=%v, err=%v)", ok, err)
	}
}

// `musterctl accept` and the hub's approver both decide rotations, and each binds the
// request's key before approving it. When one has bound the key and the other looks before
// the approval lands, the request's key is the bound key while the certificate it presents
// is the previous one: that request must be approved. Denying it (as the holder check alone
// would) leaves the cluster bound to a key its agent never gets a certificate for, and
// every later rotation of the agent is denied: the agent loses its identity.
func TestRotationWhoseKeyIsAlreadyBoundIsApproved(t *testing.T) {
	ctx := t.Context()
	current := newKey(t)
	boundCluster(t, "kappa", current)
	agent, cert := asAgent(t, "kappa", current)
	// The agent may ask while the cluster is not accepted; the request then waits.
	allowCSRCreate(t, musterv1.ClusterGroup("kappa"))
	setAccepted(t, "kappa", false)

	next := newKey(t)
	req := agentCSRFor(t, "kappa", next)
	req.Annotations = cert
	renewal := createCSR(t, agent, req)
	time.Sleep(time.Second)
	if reason, err := deniedFor(ctx, renewal.Name); err != nil || reason != "" {
		t.Fatalf("the rotation was decided while the cluster was not accepted: %q (%v)", reason, err)
	}

	// The other approver's first step: bind the request's key.
	var mc musterv1.MemberCluster
	if err := env.Client.Get(ctx, types.NamespacedName{Name: "kappa"}, &mc); err != nil {
		t.Fatal(err)
	}
	var csr certificatesv1.CertificateSigningRequest
	if err := env.Client.Get(ctx, types.NamespacedName{Name: renewal.Name}, &csr); err != nil {
		t.Fatal(err)
	}
	if err := registration.BindKey(ctx, env.Client, &mc, &csr); err != nil {
		t.Fatal(err)
	}
	setAccepted(t, "kappa", true)
	eventually(t, "the rotation to be approved", func(ctx context.Context) (bool, error) {
		if reason, err := deniedFor(ctx, renewal.Name); err != nil || reason != "" {
			return false, fmt.Errorf("the rotation was denied: %s: %w", reason, err)
		}
		return approved(ctx, renewal.Name)
	})
}

// allowCSRCreate lets group create CSRs whatever its cluster's acceptance.
func allowCSRCreate(t *testing.T, group string) {
	t.Helper()
	name := "test-csr-create-" + strings.ReplaceAll(group, ":", "-")
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create"}},
	}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: group}},
	}
	for _, o := range []client.Object{role, binding} {
		if err := env.Client.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
}

func setAccepted(t *testing.T, name string, accepted bool) {
	t.Helper()
	mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	patch := fmt.Sprintf(`{"spec":{"accepted":%t}}`, accepted)
	if err := env.Client.Patch(t.Context(), mc, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

// An agent reads only the certificate requests whose names it knows, its own: it may not
// list or watch them, which would show every cluster's.
func TestAgentCannotListCertificateRequests(t *testing.T) {
	newCluster(t, "lambda", true)
	eventually(t, "lambda's RBAC", func(ctx context.Context) (bool, error) {
		return exists(ctx, &rbacv1.ClusterRoleBinding{}, "", registration.ClusterRoleName("lambda")), nil
	})
	ctx := t.Context()
	agent := asUser(t, musterv1.AgentUser("lambda"), musterv1.MembersGroup, musterv1.ClusterGroup("lambda"))
	csrs := agent.CertificatesV1().CertificateSigningRequests()
	eventually(t, "the agent to be able to create and read its own request", func(ctx context.Context) (bool, error) {
		own, err := csrs.Create(ctx, agentCSR(t, "lambda"), metav1.CreateOptions{})
		if apierrors.IsForbidden(err) { // the RBAC is not yet in the authorizer's cache
			return false, nil
		}
		if err != nil {
			return false, err
		}
		_, err = csrs.Get(ctx, own.Name, metav1.GetOptions{})
		return err == nil, err
	})
	if _, err := csrs.List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("list CSRs as an agent: got %v, want Forbidden", err)
	}
	if w, err := csrs.Watch(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		if w != nil {
			w.Stop()
		}
		t.Errorf("watch CSRs as an agent: got %v, want Forbidden", err)
	}
}
