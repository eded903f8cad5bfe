package app_test

import (
	"path/filepath"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
