package registration_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"slices"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
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
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == registration.ReasonNotAccepted, err
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
	if len(crb.Subjects) != 1 || crb.Subjects[0].Kind != rbacv1.GroupKind || crb.Subjects[0].Name != registration.ClusterGroup("alpha") {
		t.Errorf("ClusterRoleBinding subjects = %+v, want only group %s", crb.Subjects, registration.ClusterGroup("alpha"))
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
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{
		CommonName: registration.AgentUser(cluster), Organization: []string{registration.MembersGroup, registration.ClusterGroup(cluster)},
	}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "agent-", Labels: map[string]string{registration.ClusterLabel: cluster}},
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

func TestAgentRenewalIsApprovedAndBootstrapJoinWaits(t *testing.T) {
	newCluster(t, "gamma", true)
	eventually(t, "gamma's RBAC", func(ctx context.Context) (bool, error) {
		return exists(ctx, &rbacv1.ClusterRoleBinding{}, "", registration.ClusterRoleName("gamma")), nil
	})
	ctx := t.Context()
	renewal, err := asUser(t, registration.AgentUser("gamma"), registration.MembersGroup, registration.ClusterGroup("gamma")).
		CertificatesV1().CertificateSigningRequests().Create(ctx, agentCSR(t, "gamma"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the agent could not ask for a renewal: %v", err)
	}
	eventually(t, "the renewal to be approved", func(ctx context.Context) (bool, error) { return approved(ctx, renewal.Name) })

	// A bootstrap join for the same, accepted, cluster waits for musterctl accept.
	boot := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "test-bootstrap"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node-bootstrapper"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: registration.BootstrapGroup}},
	}
	if err := env.Client.Create(ctx, boot); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	join, err := asUser(t, "system:bootstrap:abcdef", registration.BootstrapGroup, "system:bootstrappers").
		CertificatesV1().CertificateSigningRequests().Create(ctx, agentCSR(t, "gamma"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("bootstrap CSR: %v", err)
	}
	time.Sleep(2 * time.Second)
	if ok, err := approved(ctx, join.Name); err != nil || ok {
		t.Errorf("a bootstrap join was approved without musterctl accept (approved=%v, err=%v)", ok, err)
	}
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
	csr, err := asUser(t, registration.AgentUser("delta"), registration.MembersGroup, registration.ClusterGroup("delta")).
		CertificatesV1().CertificateSigningRequests().Create(ctx, agentCSR(t, "epsilon"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if ok, err := approved(ctx, csr.Name); err != nil || ok {
		t.Errorf("delta's agent got epsilon's identity approved (approved=%v, err=%v)", ok, err)
	}
}
