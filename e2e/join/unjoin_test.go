//go:build e2e

package join

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/agent/registration"
	"github.com/musterhq/muster/api/identity"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/deploy/argocd"
	"github.com/musterhq/muster/e2e/framework"
	hubregistration "github.com/musterhq/muster/hub/registration"
)

// member2's agent stops and comes back, then the cluster is denied, then unjoined (under
// a running job, which moves to member1). go test
// runs a package's tests in file order, so this file, which takes member2 away, runs last.
func TestMember2Lifecycle(t *testing.T) {
	t.Run("a stopped agent makes its cluster unreachable, a restarted one available", testHealth)
	t.Run("deny revokes the agent's access", testDeny)
	t.Run("a re-accept needs a new join, and the old certificate stays Forbidden", testReadmit)
	t.Run("unjoin revokes and uninstalls", testUnjoin)
	t.Run("a re-join after unjoin binds the new agent's key", testRejoin)
}

func hasUnreachableTaint(mc *musterv1.MemberCluster) bool {
	return slices.ContainsFunc(mc.Spec.Taints, func(t corev1.Taint) bool {
		return t.Key == musterv1.UnreachableTaintKey && t.Effect == corev1.TaintEffectNoSchedule
	})
}

func testHealth(t *testing.T) {
	ctx := t.Context()
	// The agent is stopped for longer than the grace period (gracePeriod), and the suite's
	// certificates last 60s. An agent whose certificate expired while it was stopped needs
	// an administrator to re-join it (its bootstrap Secret is gone), so stop it right after a
	// renewal: this test is about health, and the restart then finds a valid certificate,
	// sometimes one due for renewal.
	waitForFreshCertificate(t, "member2", 50*time.Second)
	muster.Agents["member2"].Stop()
	stopped := time.Now()
	err := framework.Until(ctx, 60*time.Second, "member2 to be Unknown and tainted", func(ctx context.Context) (bool, string, error) {
		var mc musterv1.MemberCluster
		if err := fleet.Hub.Client.Get(ctx, types.NamespacedName{Name: "member2"}, &mc); err != nil {
			return false, "", err
		}
		c := meta.FindStatusCondition(mc.Status.Conditions, musterv1.MemberClusterAvailable)
		return c != nil && c.Status == metav1.ConditionUnknown && hasUnreachableTaint(&mc), "waiting", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("member2 Unknown and tainted %s after its agent stopped", time.Since(stopped).Round(100*time.Millisecond))
	expectClusterHealth(t, "member2", "unreachable", argocd.Degraded, musterv1.MemberClusterAvailable)
	if mc := getCluster(t, "member1"); hasUnreachableTaint(mc) {
		t.Error("member1 was tainted when member2's agent stopped")
	}

	if err := muster.StartAgent(memberNamed("member2"), agentArgs...); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	err = framework.Until(ctx, 20*time.Second, "member2 to be Available and untainted", func(ctx context.Context) (bool, string, error) {
		var mc musterv1.MemberCluster
		if err := fleet.Hub.Client.Get(ctx, types.NamespacedName{Name: "member2"}, &mc); err != nil {
			return false, "", err
		}
		c := meta.FindStatusCondition(mc.Status.Conditions, musterv1.MemberClusterAvailable)
		return c != nil && c.Status == metav1.ConditionTrue && !hasUnreachableTaint(&mc), "waiting", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("member2 Available and untainted %s after its agent restarted", time.Since(restarted).Round(100*time.Millisecond))
	expectClusterHealth(t, "member2", "available", argocd.Healthy, musterv1.MemberClusterAvailable)
}

// waitForFreshCertificate waits until member's agent holds a certificate valid for at
// least left more.
func waitForFreshCertificate(t *testing.T, member string, left time.Duration) {
	t.Helper()
	err := framework.Until(t.Context(), 2*certLifetime, "a freshly renewed certificate", func(ctx context.Context) (bool, string, error) {
		block, _ := pem.Decode([]byte(credentialsPEM(t, member)))
		if block == nil {
			return false, "no certificate", nil
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return false, "", err
		}
		remaining := time.Until(cert.NotAfter)
		return remaining >= left, fmt.Sprintf("%s left", remaining.Round(time.Second)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// certificateNotAfter is when the certificate member's agent holds now expires.
func certificateNotAfter(t *testing.T, member string) time.Time {
	t.Helper()
	block, _ := pem.Decode([]byte(credentialsPEM(t, member)))
	if block == nil {
		t.Fatalf("%s's agent holds no PEM certificate", member)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert.NotAfter
}

func getCluster(t *testing.T, name string) *musterv1.MemberCluster {
	t.Helper()
	var mc musterv1.MemberCluster
	if err := fleet.Hub.Client.Get(t.Context(), types.NamespacedName{Name: name}, &mc); err != nil {
		t.Fatal(err)
	}
	return &mc
}

// expectRevoked checks that credentials that worked before are now Forbidden on every
// object the agent used to reach.
func expectRevoked(t *testing.T, c client.Client, cluster string) {
	t.Helper()
	ns := musterv1.MemberNamespace(cluster)
	err := framework.Until(t.Context(), 15*time.Second, "the old certificate to be Forbidden", func(ctx context.Context) (bool, string, error) {
		err := c.Get(ctx, types.NamespacedName{Name: cluster}, &musterv1.MemberCluster{})
		return apierrors.IsForbidden(err), "get own MemberCluster: " + errString(err), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	expectForbidden(t, "list own Works", c.List(ctx, &musterv1.WorkList{}, client.InNamespace(ns)))
	expectForbidden(t, "list own NodeSlices", c.List(ctx, &musterv1.NodeSliceList{}, client.InNamespace(ns)))
	expectForbidden(t, "patch own status", c.Status().Patch(ctx, &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}},
		client.RawPatch(types.MergePatchType, []byte(`{"status":{"version":"x"}}`))))
	expectForbidden(t, "renew its certificate", c.Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "revoked-"},
		Spec:       certificatesv1.CertificateSigningRequestSpec{SignerName: certificatesv1.KubeAPIServerClientSignerName, Request: []byte("x"), Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}},
	}))
}

func errString(err error) string {
	if err == nil {
		return "allowed"
	}
	return err.Error()
}

func testDeny(t *testing.T) {
	// The suite's certificates last a minute, and a denied agent renews none: deny right
	// after a renewal, so that the readmission below still has a valid old certificate to
	// show Forbidden (not merely expired).
	waitForFreshCertificate(t, "member2", 50*time.Second)
	old := agentClient(t, "member2")
	if err := old.Get(t.Context(), types.NamespacedName{Name: "member2"}, &musterv1.MemberCluster{}); err != nil {
		t.Fatalf("before deny the agent's certificate must work: %v", err)
	}
	if _, err := muster.Musterctl(t.Context(), fleet.Hub, "deny", "member2"); err != nil {
		t.Fatal(err)
	}
	expectRevoked(t, old, "member2")
	// The hub revokes the agent's access first and then writes the condition that says so:
	// the refusal above may come before it.
	if _, err := framework.WaitForClusterCondition(t.Context(), fleet.Hub, "member2", musterv1.MemberClusterAccepted, metav1.ConditionFalse, 30*time.Second); err != nil {
		t.Errorf("Accepted after deny: %v", err)
	}
	expectClusterHealth(t, "member2", "denied", argocd.Degraded, musterv1.MemberClusterJoined)
}

// testReadmit readmits the denied member2 as the README says: a join line bound to it, the
// join in the member, musterctl accept. The agent keeps its key (no --rekey), its new
// certificate belongs to a new join, and the certificate from before the deny reaches
// nothing, although the cluster, its name and its key are the same.
func testReadmit(t *testing.T) {
	ctx := t.Context()
	member := memberNamed("member2")
	old, oldJoin, oldNotAfter := agentClient(t, "member2"), currentJoin(t, "member2"), certificateNotAfter(t, "member2")
	key := getCluster(t, "member2").Annotations[identity.AgentKeyAnnotation]

	// Accepting alone gives the old certificate nothing back.
	if out, err := muster.Musterctl(ctx, fleet.Hub, "accept", "member2", "--wait", "5s"); err == nil || !strings.Contains(out, "must join again") {
		t.Errorf("musterctl accept of a denied cluster whose agent has not joined again: %v\n%s", err, out)
	}
	if _, err := framework.WaitForClusterCondition(ctx, fleet.Hub, "member2", musterv1.MemberClusterAccepted, metav1.ConditionTrue, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	expectRevoked(t, old, "member2")

	out, err := muster.Musterctl(ctx, fleet.Hub, "token", "create", "--cluster", "member2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := muster.Join(ctx, member, "member2", "--hub-token", joinToken(t, strings.Fields(out))); err != nil {
		t.Fatal(err)
	}
	// The running agent sees the new join line beside its refused certificate (within a
	// poll), believes the refusal once it lasts (registration.RefusalSettle), and stops to
	// join again; its Deployment would restart it, here the test does.
	if err := framework.Until(ctx, registration.RejoinPoll+registration.RefusalSettle+20*time.Second, "member2's agent to stop for the new join", func(context.Context) (bool, string, error) {
		return !muster.Agents["member2"].Running(), "running", nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := muster.StartAgent(member, agentArgs...); err != nil {
		t.Fatal(err)
	}
	out, err = muster.Musterctl(ctx, fleet.Hub, "accept", "member2")
	if err != nil || !strings.Contains(out, "(1 certificate request(s) approved)") {
		t.Fatalf("musterctl accept member2 after the new join: %v\n%s", err, out)
	}
	if err := framework.Until(ctx, time.Minute, "member2's new certificate to work", func(ctx context.Context) (bool, string, error) {
		if currentJoin(t, "member2") == oldJoin {
			return false, "still the old join's certificate", nil
		}
		err := agentClient(t, "member2").Get(ctx, types.NamespacedName{Name: "member2"}, &musterv1.MemberCluster{})
		return err == nil, errString(err), nil
	}); err != nil {
		t.Fatal(err)
	}
	if time.Now().Before(oldNotAfter) {
		expectRevoked(t, old, "member2")
	} else {
		// Expired meanwhile: the API server refuses it before RBAC is asked (the envtest
		// TestOldCertificateIsForbiddenAfterDenyAndRejoin shows the RBAC refusal itself).
		err := old.Get(ctx, types.NamespacedName{Name: "member2"}, &musterv1.MemberCluster{})
		if !apierrors.IsUnauthorized(err) {
			t.Errorf("the expired old certificate: got %v, want Unauthorized", err)
		}
		t.Logf("the old certificate expired %s before the last check", time.Since(oldNotAfter).Round(time.Second))
	}
	if got := getCluster(t, "member2").Annotations[identity.AgentKeyAnnotation]; got != key {
		t.Errorf("member2's bound key moved from %s to %s: the re-join should keep the agent's key", key, got)
	}
}

func testUnjoin(t *testing.T) {
	ctx := t.Context()
	member := memberNamed("member2")
	old := agentClient(t, "member2")
	if err := old.Get(ctx, types.NamespacedName{Name: "member2"}, &musterv1.MemberCluster{}); err != nil {
		t.Fatalf("before unjoin the readmitted agent's certificate must work: %v", err)
	}
	// A Work the agent applied carries its cleanup finalizer; with the agent gone, the hub
	// must release it or member2's hub namespace could never be deleted.
	w := &musterv1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: musterv1.MemberNamespace("member2"), Name: "left-behind"}}
	if err := fleet.Hub.Client.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	if err := framework.Until(ctx, 30*time.Second, "the agent to take the Work", func(ctx context.Context) (bool, string, error) {
		err := fleet.Hub.Client.Get(ctx, types.NamespacedName{Namespace: w.Namespace, Name: w.Name}, w)
		return err == nil && slices.Contains(w.Finalizers, musterv1.WorkCleanupFinalizer), errString(err), nil
	}); err != nil {
		t.Fatal(err)
	}
	// A job running on member2 when it is removed moves to member1 and completes there. It
	// is placed last before the agent stops, so that its pod still runs then.
	outlives := runningOnMember2(t)
	muster.Agents["member2"].Stop()
	if _, err := muster.Musterctl(ctx, fleet.Hub, "unjoin", "member2", "--member-kubeconfig", member.Kubeconfig); err != nil {
		t.Fatal(err)
	}
	expectRevoked(t, old, "member2")
	err := framework.Until(ctx, 30*time.Second, "member2's hub namespace and agent namespace to go", func(ctx context.Context) (bool, string, error) {
		hubErr := fleet.Hub.Client.Get(ctx, types.NamespacedName{Name: musterv1.MemberNamespace("member2")}, &corev1.Namespace{})
		memberErr := member.Client.Get(ctx, types.NamespacedName{Name: musterv1.AgentNamespace}, &corev1.Namespace{})
		return apierrors.IsNotFound(hubErr) && apierrors.IsNotFound(memberErr), "hub: " + errString(hubErr) + ", member: " + errString(memberErr), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var crb metav1.PartialObjectMetadata
	crb.SetGroupVersionKind(schemaGVK("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding"))
	if err := fleet.Hub.Client.Get(ctx, types.NamespacedName{Name: hubregistration.ClusterRoleName("member2")}, &crb); !apierrors.IsNotFound(err) {
		t.Errorf("member2's ClusterRoleBinding after unjoin: %v, want NotFound", err)
	}
	expectMovedOffMember2(t, outlives)
}

// After unjoin the name is free: a fresh join with a new key is accepted and bound, and the
// new agent deletes its bootstrap Secret again.
func testRejoin(t *testing.T) {
	ctx := t.Context()
	member := memberNamed("member2")
	if err := framework.Until(ctx, 30*time.Second, "member2's MemberCluster to go", func(ctx context.Context) (bool, string, error) {
		err := fleet.Hub.Client.Get(ctx, types.NamespacedName{Name: "member2"}, &musterv1.MemberCluster{})
		return apierrors.IsNotFound(err), errString(err), nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := muster.Join(ctx, member, "member2"); err != nil {
		t.Fatal(err)
	}
	if err := muster.StartAgent(member, agentArgs...); err != nil {
		t.Fatal(err)
	}
	out, err := muster.Musterctl(ctx, fleet.Hub, "accept", "member2")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "(1 certificate request(s) approved)") {
		t.Errorf("musterctl accept member2 after the re-join:\n%s", out)
	}
	if _, err := framework.WaitForClusterCondition(ctx, fleet.Hub, "member2", musterv1.MemberClusterAvailable, metav1.ConditionTrue, time.Minute); err != nil {
		t.Fatal(err)
	}
	if key := getCluster(t, "member2").Annotations[identity.AgentKeyAnnotation]; key == "" {
		t.Error("the re-joined member2 is bound to no key")
	}
	err = member.Client.Get(ctx, types.NamespacedName{Namespace: musterv1.AgentNamespace, Name: registration.BootstrapSecret}, &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("member2's bootstrap Secret after the re-join: got %v, want NotFound", err)
	}
}
