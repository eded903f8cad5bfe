package app_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/identity"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// unreachableMember writes a kubeconfig of a member cluster whose API server is not there.
func unreachableMember(t *testing.T) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["gone"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1", InsecureSkipTLSVerify: true}
	kc.AuthInfos["gone"] = &clientcmdapi.AuthInfo{Token: "x"}
	kc.Contexts["gone"] = &clientcmdapi.Context{Cluster: "gone", AuthInfo: "gone"}
	kc.CurrentContext = "gone"
	path := filepath.Join(t.TempDir(), "member.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// unjoin revokes the cluster on the hub first: when the member cannot be reached, the
// cluster is already gone from the hub, its pending requests denied, and the command
// fails saying what is left to do.
func TestUnjoinRemovesTheClusterFromTheHubBeforeTheMember(t *testing.T) {
	cluster := uniqueName("unjoin")
	memberCluster(t, cluster, true, map[string]string{identity.AgentJoinAnnotation: "j"})
	pending := pendingCSR(t, cluster)
	member := unreachableMember(t)

	r := musterctl("unjoin", cluster, "--member-kubeconfig", member)
	if r.code != 1 || r.out != "✓ cluster "+cluster+" removed from the hub\n" || !strings.Contains(r.err, "127.0.0.1:1") {
		t.Fatalf("unjoin with the member unreachable:\n%s", r)
	}
	err := env.Client.Get(t.Context(), client.ObjectKey{Name: cluster}, &musterv1.MemberCluster{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("MemberCluster %s after unjoin: %v, want NotFound", cluster, err)
	}
	if conds := csrConditions(t, pending); len(conds) != 1 || conds[0].Type != certificatesv1.CertificateDenied {
		t.Errorf("the cluster's pending request after unjoin: %+v, want Denied", conds)
	}

	// Run again once the hub has forgotten the cluster, unjoin goes on to the member
	// instead of stopping at the hub: it can be retried until the member is clean.
	r = musterctl("unjoin", cluster, "--member-kubeconfig", member)
	if r.code != 1 || r.out != "✓ cluster "+cluster+" is not on the hub\n" || !strings.Contains(r.err, "127.0.0.1:1") {
		t.Errorf("unjoin again:\n%s", r)
	}
}

// A member kubeconfig that cannot be loaded fails before anything changes on the hub.
func TestUnjoinChecksTheMemberKubeconfigFirst(t *testing.T) {
	cluster := uniqueName("unjoin-bad")
	memberCluster(t, cluster, true, nil)
	for _, args := range [][]string{
		{"--member-kubeconfig", filepath.Join(t.TempDir(), "absent")},
		{"--member-kubeconfig", unreachableMember(t), "--member-context", "nope"},
	} {
		r := musterctl(append([]string{"unjoin", cluster}, args...)...)
		if r.code != 1 || !strings.HasPrefix(r.err, "error: member cluster: ") || r.out != "" {
			t.Errorf("unjoin %v: want exit 1 and a member-cluster error:\n%s", args, r)
		}
	}
	if !getMemberCluster(t, cluster).Spec.Accepted {
		t.Error("a failed unjoin denied the cluster")
	}
}

// A member whose agent joined under another name is refused before anything changes on
// the hub or in the member: a mistyped CLUSTER must not revoke one cluster and uninstall
// another's agent.
func TestUnjoinRefusesAMemberJoinedUnderAnotherName(t *testing.T) {
	cluster := uniqueName("unjoin-typo")
	memberCluster(t, cluster, true, nil)
	// The suite's API server plays the member, joined as another cluster. Without a
	// namespace controller its namespace is finalized by hand, so that the join tests,
	// which expect no agent namespace, still find none.
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: musterv1.AgentNamespace}})
	t.Cleanup(func() { removeNamespace(t, musterv1.AgentNamespace) })
	joinLine := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: musterv1.AgentNamespace, Name: identity.BootstrapSecret},
		Data:       map[string][]byte{identity.KeyClusterName: []byte("someone-else")},
	}
	create(t, joinLine)

	r := musterctl("unjoin", cluster, "--member-kubeconfig", kubeconfig)
	if r.code != 1 || r.out != "" || !strings.Contains(r.err, `the member's agent joined as "someone-else", not "`+cluster+`"`) {
		t.Fatalf("unjoin of a member joined as another cluster:\n%s", r)
	}
	if !getMemberCluster(t, cluster).Spec.Accepted {
		t.Error("the refused unjoin denied the cluster on the hub")
	}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(joinLine), &corev1.Secret{}); err != nil {
		t.Errorf("the member's join line after the refused unjoin: %v", err)
	}
}

// removeNamespace deletes a namespace and finalizes it, as the namespace controller that
// envtest lacks would once the namespace is empty.
func removeNamespace(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	ns.Spec.Finalizers = nil
	if _, err := cs.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
