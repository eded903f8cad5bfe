//go:build e2e

package join

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/agent/registration"
	"github.com/musterhq/muster/api/identity"
	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/attacks"
)

// agentClient is a hub client with the credentials member's agent holds right now.
func agentClient(t *testing.T, member string) client.Client {
	t.Helper()
	var sec corev1.Secret
	key := types.NamespacedName{Namespace: musterv1.AgentNamespace, Name: registration.CredentialsSecret}
	if err := memberNamed(member).Client.Get(t.Context(), key, &sec); err != nil {
		t.Fatalf("reading %s's agent credentials: %v", member, err)
	}
	return hubClient(t, &rest.Config{Host: string(sec.Data[registration.KeyHubURL]), TLSClientConfig: rest.TLSClientConfig{
		CAData: sec.Data[registration.KeyCA], CertData: sec.Data[registration.KeyTLSCert], KeyData: sec.Data[registration.KeyTLSKey],
	}})
}

// bootstrapClient is a hub client with the bootstrap token musterctl init printed. The
// members no longer hold it after their join, so it comes from the join line.
func bootstrapClient(t *testing.T) client.Client {
	t.Helper()
	return tokenClient(t, joinToken(t, muster.JoinArgs))
}

func joinToken(t *testing.T, args []string) string {
	t.Helper()
	token, err := attacks.JoinToken(args)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func tokenClient(t *testing.T, token string) client.Client {
	t.Helper()
	c, err := attacks.TokenClient(fleet.Hub, token)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func hubClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func expectForbidden(t *testing.T, what string, err error) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Errorf("%s: got %v, want Forbidden", what, err)
	}
}

func aWork(namespace string) *musterv1.Work {
	return &musterv1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "intruder"}}
}

// Agent member1's own credentials reach nothing of member2's, each case on its own.
func TestAgentCannotTouchAnotherCluster(t *testing.T) {
	c1 := agentClient(t, "member1")
	other := musterv1.MemberNamespace("member2")
	cases := map[string]func(ctx context.Context) error{
		"get member2's MemberCluster": func(ctx context.Context) error {
			return c1.Get(ctx, types.NamespacedName{Name: "member2"}, &musterv1.MemberCluster{})
		},
		"update member2's MemberCluster spec": func(ctx context.Context) error {
			mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}}
			return c1.Patch(ctx, mc, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"accepted":false}}`)))
		},
		"update member2's MemberCluster status": func(ctx context.Context) error {
			mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}}
			return c1.Status().Patch(ctx, mc, client.RawPatch(types.MergePatchType, []byte(`{"status":{"version":"forged"}}`)))
		},
		"list member2's Works": func(ctx context.Context) error {
			return c1.List(ctx, &musterv1.WorkList{}, client.InNamespace(other))
		},
		"create a Work in member2's namespace": func(ctx context.Context) error {
			return c1.Create(ctx, aWork(other))
		},
		"update a Work's status in member2's namespace": func(ctx context.Context) error {
			return c1.Status().Patch(ctx, aWork(other), client.RawPatch(types.MergePatchType, []byte(`{"status":{"observedGeneration":1}}`)))
		},
		"list member2's NodeSlices": func(ctx context.Context) error {
			return c1.List(ctx, &musterv1.NodeSliceList{}, client.InNamespace(other))
		},
		"delete member2's NodeSlice": func(ctx context.Context) error {
			return c1.Delete(ctx, &musterv1.NodeSlice{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "member2-0"}})
		},
		"read member2's lease": func(ctx context.Context) error {
			return c1.Get(ctx, types.NamespacedName{Namespace: other, Name: "muster-agent"}, &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"}})
		},
		"list every MemberCluster": func(ctx context.Context) error {
			return c1.List(ctx, &musterv1.MemberClusterList{})
		},
		"list every cluster's certificate requests": func(ctx context.Context) error {
			return c1.List(ctx, &certificatesv1.CertificateSigningRequestList{})
		},
		"watch certificate requests": func(ctx context.Context) error {
			w, err := c1.(client.WithWatch).Watch(ctx, &certificatesv1.CertificateSigningRequestList{})
			if err == nil {
				w.Stop()
			}
			return err
		},
		"accept itself by editing its own spec": func(ctx context.Context) error {
			mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}}
			return c1.Patch(ctx, mc, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"taints":[]}}`)))
		},
	}
	for name, attempt := range cases {
		t.Run(name, func(t *testing.T) { expectForbidden(t, name, attempt(t.Context())) })
	}
	// The same credentials do work on member1's own objects, so the denials above are
	// about scope, not about broken credentials.
	t.Run("control: its own MemberCluster and Works", func(t *testing.T) {
		if err := c1.Get(t.Context(), types.NamespacedName{Name: "member1"}, &musterv1.MemberCluster{}); err != nil {
			t.Errorf("get own MemberCluster: %v", err)
		}
		if err := c1.List(t.Context(), &musterv1.WorkList{}, client.InNamespace(musterv1.MemberNamespace("member1"))); err != nil {
			t.Errorf("list own Works: %v", err)
		}
	})
}

func TestBootstrapTokenOnlyRegisters(t *testing.T) {
	boot := bootstrapClient(t)
	t.Run("cannot list Works", func(t *testing.T) {
		expectForbidden(t, "list Works", boot.List(t.Context(), &musterv1.WorkList{}, client.InNamespace(musterv1.MemberNamespace("member1"))))
	})
	t.Run("cannot list NodeSlices", func(t *testing.T) {
		expectForbidden(t, "list NodeSlices", boot.List(t.Context(), &musterv1.NodeSliceList{}, client.InNamespace(musterv1.MemberNamespace("member1"))))
	})
	t.Run("cannot list certificate requests", func(t *testing.T) {
		expectForbidden(t, "list CSRs", boot.List(t.Context(), &certificatesv1.CertificateSigningRequestList{}))
	})
	t.Run("cannot read Secrets", func(t *testing.T) {
		expectForbidden(t, "list Secrets", boot.List(t.Context(), &corev1.SecretList{}, client.InNamespace("kube-system")))
	})
	t.Run("cannot register a cluster as accepted", func(t *testing.T) {
		mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "self-accepted"}, Spec: musterv1.MemberClusterSpec{Accepted: true}}
		err := boot.Create(t.Context(), mc)
		if err == nil || !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
			t.Fatalf("create accepted MemberCluster with a bootstrap token: got %v, want rejection", err)
		}
	})
	t.Run("cannot accept an existing cluster", func(t *testing.T) {
		mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}}
		err := boot.Patch(t.Context(), mc, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"accepted":true}}`)))
		expectForbidden(t, "patch MemberCluster", err)
	})
}

// member3 first fails to join with bad input, then joins and is never accepted.
func TestMember3(t *testing.T) {
	t.Run("bad join input is refused and installs nothing", testBadJoinInput)
	t.Run("a cluster that is not accepted gets nothing", testUnacceptedClusterGetsNothing)
}

// A cluster that registers but is never accepted gets no namespace, no RBAC and no
// certificate.
func testUnacceptedClusterGetsNothing(t *testing.T) {
	ctx := t.Context()
	member := memberNamed("member3")
	if _, err := muster.Join(ctx, member, "member3"); err != nil {
		t.Fatal(err)
	}
	if err := muster.StartAgent(member, agentArgs...); err != nil {
		t.Fatal(err)
	}
	defer muster.Agents["member3"].Stop()
	var csrs certificatesv1.CertificateSigningRequestList
	err := waitFor(ctx, 30*time.Second, func(ctx context.Context) (bool, error) {
		if err := fleet.Hub.Client.List(ctx, &csrs, client.MatchingLabels{"muster.dev/cluster": "member3"}); err != nil {
			return false, err
		}
		return len(csrs.Items) > 0, nil
	})
	if err != nil {
		t.Fatalf("member3's agent never asked for a certificate: %v", err)
	}
	// Give the hub time to (wrongly) act on it.
	time.Sleep(5 * time.Second)
	if err := fleet.Hub.Client.List(ctx, &csrs, client.MatchingLabels{"muster.dev/cluster": "member3"}); err != nil {
		t.Fatal(err)
	}
	for _, csr := range csrs.Items {
		if len(csr.Status.Certificate) > 0 || len(csr.Status.Conditions) > 0 {
			t.Errorf("CSR %s of the unaccepted cluster was decided: %+v", csr.Name, csr.Status.Conditions)
		}
	}
	err = fleet.Hub.Client.Get(ctx, types.NamespacedName{Name: musterv1.MemberNamespace("member3")}, &corev1.Namespace{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("namespace of the unaccepted cluster: got %v, want NotFound", err)
	}
	var rb metav1.PartialObjectMetadata
	rb.SetGroupVersionKind(schemaGVK("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding"))
	err = fleet.Hub.Client.Get(ctx, types.NamespacedName{Name: "muster:member:member3"}, &rb)
	if !apierrors.IsNotFound(err) {
		t.Errorf("ClusterRoleBinding of the unaccepted cluster: got %v, want NotFound", err)
	}
	err = member.Client.Get(ctx, types.NamespacedName{Namespace: musterv1.AgentNamespace, Name: registration.CredentialsSecret}, &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("credentials in the unaccepted member: got %v, want NotFound", err)
	}
}

// agentCSR asks for a certificate of join joinID (a fresh one when empty) of cluster's
// agent identity with a fresh key, for an hour, as an agent's request is shaped.
func agentCSR(t *testing.T, cluster, joinID string, annotations map[string]string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	csr, err := attacks.AgentCSR(cluster, joinID, annotations)
	if err != nil {
		t.Fatal(err)
	}
	return csr
}

// currentJoin is the join id of the certificate member's agent holds now.
func currentJoin(t *testing.T, member string) string {
	t.Helper()
	block, _ := pem.Decode([]byte(credentialsPEM(t, member)))
	if block == nil {
		t.Fatalf("%s's agent holds no PEM certificate", member)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	id, ok := identity.JoinIDOf(member, cert.Subject.Organization)
	if !ok {
		t.Fatalf("%s's certificate names no join: %v", member, cert.Subject.Organization)
	}
	return id
}

// expectDenied waits for the hub to deny csr, and checks it was never issued.
func expectDenied(t *testing.T, c client.Client, csr *certificatesv1.CertificateSigningRequest) {
	t.Helper()
	expectDeniedWith(t, c, csr, "")
}

// expectDeniedWith waits for the hub to deny csr with reason (any when empty), and checks
// it was never issued.
func expectDeniedWith(t *testing.T, c client.Client, csr *certificatesv1.CertificateSigningRequest, reason string) {
	t.Helper()
	if err := attacks.Denied(t.Context(), c, fleet.Hub.Client, csr, reason); err != nil {
		t.Errorf("want Denied: %v", err)
	}
}

// credentialsPEM returns the certificate member's agent holds now.
func credentialsPEM(t *testing.T, member string) string {
	t.Helper()
	var sec corev1.Secret
	key := types.NamespacedName{Namespace: musterv1.AgentNamespace, Name: registration.CredentialsSecret}
	if err := memberNamed(member).Client.Get(t.Context(), key, &sec); err != nil {
		t.Fatal(err)
	}
	return string(sec.Data[registration.KeyTLSCert])
}

// The attacks of issue 14, each against member2's (or another) identity, each Forbidden
// or Denied. The positive controls are the join, rotation and unjoin tests of this suite.
func TestJoinAttacks(t *testing.T) {
	t.Run("takeover: the shared token asks for member2's identity, and musterctl accept refuses it", func(t *testing.T) {
		csr := agentCSR(t, "member2", "", nil)
		expectDenied(t, bootstrapClient(t), csr)
		out, err := muster.Musterctl(t.Context(), fleet.Hub, "accept", "member2")
		if err != nil {
			t.Fatalf("musterctl accept member2: %v", err)
		}
		if !strings.Contains(out, "(0 certificate request(s) approved)") {
			t.Errorf("musterctl accept member2 approved something after the takeover attempt:\n%s", out)
		}
	})
	t.Run("token reuse after join: the member no longer holds its bootstrap token", func(t *testing.T) {
		for _, m := range joined {
			err := memberNamed(m).Client.Get(t.Context(), types.NamespacedName{Namespace: musterv1.AgentNamespace, Name: registration.BootstrapSecret}, &corev1.Secret{})
			if !apierrors.IsNotFound(err) {
				t.Errorf("%s's bootstrap Secret: got %v, want NotFound", m, err)
			}
		}
	})
	t.Run("forged rotation: member1's certificate names member2's certificate", func(t *testing.T) {
		forged := agentCSR(t, "member1", currentJoin(t, "member1"), map[string]string{identity.CurrentCertificateAnnotation: credentialsPEM(t, "member2")})
		expectDeniedWith(t, agentClient(t, "member1"), forged, musterv1.ReasonAgentKeyMismatch)
	})
	t.Run("forged rotation: member1's identity without its current certificate", func(t *testing.T) {
		expectDeniedWith(t, agentClient(t, "member1"), agentCSR(t, "member1", currentJoin(t, "member1"), nil), musterv1.ReasonAgentKeyMismatch)
	})
	t.Run("another member's agent asks for member2's identity", func(t *testing.T) {
		expectDenied(t, agentClient(t, "member1"), agentCSR(t, "member2", "", nil))
	})
	t.Run("a token bound to one cluster asks for another name", func(t *testing.T) {
		out, err := muster.Musterctl(t.Context(), fleet.Hub, "token", "create", "--cluster", "bound-one")
		if err != nil {
			t.Fatal(err)
		}
		boot := tokenClient(t, joinToken(t, strings.Fields(out)))
		err = boot.Create(t.Context(), &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "bound-other"}})
		if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
			t.Errorf("create MemberCluster bound-other with a token bound to bound-one: got %v, want rejection", err)
		}
		expectDenied(t, boot, agentCSR(t, "bound-other", "", nil))
	})
	t.Run("a bootstrap token cannot pre-bind a name to its key", func(t *testing.T) {
		mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "prebound", Annotations: map[string]string{identity.AgentKeyAnnotation: "sha256:00"}}}
		err := bootstrapClient(t).Create(t.Context(), mc)
		if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
			t.Errorf("create a pre-bound MemberCluster: got %v, want rejection", err)
		}
	})
}

// The join-token and certificate rows of issue 28's attack table (e2e/attacks, which the
// kind suite runs too), each refused with its reason; the controls are the joins of this
// suite, whose agents ask for a day (the hub's maximum) and read their own clusters.
func TestJoinTokenAndCertificateAttacks(t *testing.T) {
	hub := attacks.Hub{Admin: fleet.Hub, JoinArgs: muster.JoinArgs, Member: "member1",
		Musterctl: func(ctx context.Context, args ...string) (string, error) {
			return muster.Musterctl(ctx, fleet.Hub, args...)
		}}
	for _, check := range attacks.JoinTokenAndCertificate(hub) {
		t.Run(check.Name, func(t *testing.T) {
			if err := check.Run(t.Context()); err != nil {
				t.Error(err)
			}
		})
	}
}
