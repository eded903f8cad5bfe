package app_test

import (
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/musterhq/muster/api/identity"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/builders"
)

// joinRequest creates, as a bootstrap token would, an agent's request to join cluster with
// key; it returns the request's name and the key's fingerprint.
func joinRequest(t *testing.T, cluster string, key *ecdsa.PrivateKey) (name, fingerprint string) {
	t.Helper()
	return labelledJoinRequest(t, cluster, cluster, key)
}

// labelledJoinRequest is joinRequest with the cluster label chosen apart from the cluster
// the request names, as a bootstrap token holder may.
func labelledJoinRequest(t *testing.T, label, cluster string, key *ecdsa.PrivateKey) (name, fingerprint string) {
	t.Helper()
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		t.Fatal(err)
	}
	request, err := identity.NewAgentRequest(cluster, hex.EncodeToString(id), key)
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(env.Config)
	// system:masters lets the impersonated token create the request without the hub's
	// bootstrap RBAC; the bootstrap group is what makes it a join.
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:bootstrap:abcdef", Groups: []string{identity.BootstrapGroup, "system:masters"}}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	csr := builders.MakeCSR("join-").Label(musterv1.ClusterNameLabel, label).Request(request).Obj()
	got, err := cs.CertificatesV1().CertificateSigningRequests().Create(t.Context(), csr, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got.Name, identity.KeyFingerprint(builders.SPKI(key))
}

// decision is the one Approved or Denied condition of a request, or "" when undecided.
func decision(t *testing.T, name string) (certificatesv1.RequestConditionType, string) {
	t.Helper()
	conds := csrConditions(t, name)
	if len(conds) == 0 {
		return "", ""
	}
	if len(conds) > 1 {
		t.Fatalf("request %s has %d conditions: %+v", name, len(conds), conds)
	}
	return conds[0].Type, conds[0].Reason
}

// accept approves a registered cluster's first join, binds the cluster to that join's key
// and says which request it approved and for which key.
func TestAcceptApprovesTheFirstJoinAndBindsItsKey(t *testing.T) {
	cluster := uniqueName("first")
	memberCluster(t, cluster, false, nil)
	csr, key := joinRequest(t, cluster, builders.NewKey())

	r := musterctl("accept", cluster, "--wait", "10s")
	want := "  approved " + csr + " (requested by system:bootstrap:abcdef, key " + key + ")\n✓ cluster " + cluster + " accepted (1 certificate request(s) approved)\n"
	if r.code != 0 || r.out != want {
		t.Fatalf("accept:\n%s\nwant stdout:\n%s", r, want)
	}
	if typ, reason := decision(t, csr); typ != certificatesv1.CertificateApproved || reason != musterv1.CSRReasonAcceptedByMusterctl {
		t.Errorf("the join's request is %s (%s), want Approved (%s)", typ, reason, musterv1.CSRReasonAcceptedByMusterctl)
	}
	mc := getMemberCluster(t, cluster)
	if !mc.Spec.Accepted || mc.Annotations[identity.AgentKeyAnnotation] != key || mc.Annotations[identity.AgentJoinAnnotation] == "" {
		t.Errorf("after accept: accepted %t, annotations %v; want accepted, bound to %s with a join", mc.Spec.Accepted, mc.Annotations, key)
	}
}

// A cluster bound to one key refuses, and shows, a join with another key; --rekey lets
// the administrator replace a lost key with that join's.
func TestAcceptRefusesAnotherKeyUnlessRekey(t *testing.T) {
	cluster := uniqueName("bound")
	boundKey := identity.KeyFingerprint(builders.SPKI(builders.NewKey()))
	// Bound by an earlier join, then denied (which forgets the join).
	memberCluster(t, cluster, false, map[string]string{identity.AgentKeyAnnotation: boundKey})
	intruder, intruderKey := joinRequest(t, cluster, builders.NewKey())

	r := musterctl("accept", cluster, "--wait", "2s")
	refused := regexp.MustCompile(`(?m)^  refused ` + intruder + ` \(requested by system:bootstrap:abcdef\): cluster ` + cluster + ` already joined with key ` + boundKey + `; this request's key ` + intruderKey + ` is not it \(an administrator replacing a lost key runs ` + "`musterctl accept --rekey " + cluster + "`" + `\)$`)
	if r.code != 1 || !refused.MatchString(r.out) || !strings.Contains(r.err, "its agent has not asked for a certificate within 2s") {
		t.Errorf("accept of a join with another key:\n%s", r)
	}
	if typ, reason := decision(t, intruder); typ != certificatesv1.CertificateDenied || reason != musterv1.ReasonAgentKeyMismatch {
		t.Errorf("the other key's request is %s (%s), want Denied (%s)", typ, reason, musterv1.ReasonAgentKeyMismatch)
	}
	if got := getMemberCluster(t, cluster).Annotations[identity.AgentKeyAnnotation]; got != boundKey {
		t.Errorf("a refused join rebound the cluster to %s", got)
	}

	// The agent lost its key and joins again with a new one; the administrator says so.
	replacement, newKey := joinRequest(t, cluster, builders.NewKey())
	r = musterctl("accept", cluster, "--rekey", "--wait", "10s")
	if r.code != 0 || !strings.Contains(r.out, "  approved "+replacement+" ") || !strings.HasSuffix(r.out, "(1 certificate request(s) approved)\n") {
		t.Fatalf("accept --rekey:\n%s", r)
	}
	if got := getMemberCluster(t, cluster).Annotations[identity.AgentKeyAnnotation]; got != newKey {
		t.Errorf("after --rekey the cluster is bound to %s, want %s", got, newKey)
	}
}

// Two joins with different keys for a cluster not yet bound: accept cannot tell which is
// the cluster's agent, approves neither, and says what to do.
func TestAcceptRefusesToChooseBetweenTwoKeys(t *testing.T) {
	cluster := uniqueName("twokeys")
	memberCluster(t, cluster, false, nil)
	first, _ := joinRequest(t, cluster, builders.NewKey())
	second, _ := joinRequest(t, cluster, builders.NewKey())

	r := musterctl("accept", cluster, "--wait", "2s")
	want := "cluster " + cluster + " has 2 pending joins with different keys"
	if r.code != 1 || !strings.Contains(r.err, want) || !strings.Contains(r.err, "deny the ones that are not its agent's (kubectl certificate deny) and retry") {
		t.Errorf("accept with two candidate keys: want exit 1 and %q:\n%s", want, r)
	}
	if strings.Contains(r.err, "has not asked for a certificate") {
		t.Errorf("accept says the agent has not asked, though two joins are pending:\n%s", r)
	}
	for _, csr := range []string{first, second} {
		if typ, _ := decision(t, csr); typ != "" {
			t.Errorf("request %s was decided (%s) though accept could not tell the keys apart", csr, typ)
		}
	}
}

// A request lasting longer than --max-certificate-lifetime is denied with the reason.
func TestAcceptDeniesACertificateLongerThanAllowed(t *testing.T) {
	cluster := uniqueName("lifetime")
	memberCluster(t, cluster, false, nil)
	csr, _ := joinRequest(t, cluster, builders.NewKey()) // an hour, as an agent asks
	r := musterctl("accept", cluster, "--wait", "2s", "--max-certificate-lifetime", "30m")
	if r.code != 1 || !strings.Contains(r.out, "  refused "+csr+" (requested by system:bootstrap:abcdef): ") {
		t.Errorf("accept with a 30m limit of an hour's request:\n%s", r)
	}
	if typ, reason := decision(t, csr); typ != certificatesv1.CertificateDenied || reason != musterv1.ReasonCertificateLifetime {
		t.Errorf("the request is %s (%s), want Denied (%s)", typ, reason, musterv1.ReasonCertificateLifetime)
	}
}

// accept and deny take several clusters and stop at the first that fails, having done
// the ones before it.
func TestAcceptAndDenySeveralClusters(t *testing.T) {
	a, b, absent := uniqueName("multi-a"), uniqueName("multi-b"), uniqueName("multi-absent")
	memberCluster(t, a, true, map[string]string{identity.AgentJoinAnnotation: "j-a"})
	memberCluster(t, b, true, map[string]string{identity.AgentJoinAnnotation: "j-b"})

	r := musterctl("deny", a, absent, b)
	if r.code != 1 || r.out != "✓ cluster "+a+" denied\n" || !strings.Contains(r.err, "no cluster of that name has registered with this hub: "+absent) {
		t.Errorf("deny a absent b:\n%s", r)
	}
	if getMemberCluster(t, a).Spec.Accepted || !getMemberCluster(t, b).Spec.Accepted {
		t.Error("deny a absent b: want a denied and b, after the failure, untouched")
	}
	r = musterctl("deny", b)
	if r.code != 0 {
		t.Fatalf("deny b:\n%s", r)
	}
	for _, name := range []string{a, b} {
		if getMemberCluster(t, name).Spec.Accepted {
			t.Errorf("%s still accepted", name)
		}
	}
}

// A request labelled with the cluster whose subject names another is not the cluster's
// (the label is the requester's to set): accept passes over it, neither counting its key
// among the cluster's joins nor approving it, and approves the cluster's own join.
func TestAcceptPassesOverARequestNamingAnotherCluster(t *testing.T) {
	cluster := uniqueName("mislabelled")
	memberCluster(t, cluster, false, nil)
	forged, _ := labelledJoinRequest(t, cluster, uniqueName("other"), builders.NewKey())
	csr, key := joinRequest(t, cluster, builders.NewKey())

	r := musterctl("accept", cluster, "--wait", "10s")
	if r.code != 0 || !strings.Contains(r.out, "  approved "+csr+" ") {
		t.Fatalf("accept with a mislabelled request pending:\n%s", r)
	}
	if typ, _ := decision(t, forged); typ != "" {
		t.Errorf("the request naming another cluster was %s by accept %s", typ, cluster)
	}
	if got := getMemberCluster(t, cluster).Annotations[identity.AgentKeyAnnotation]; got != key {
		t.Errorf("cluster bound to key %q, want its own join's %s", got, key)
	}
}
