package app_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/identity"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// memberCluster creates a registered MemberCluster, accepted or not, with the annotations
// given (a join, a bound key).
func memberCluster(t *testing.T, name string, accepted bool, annotations map[string]string) {
	t.Helper()
	create(t, &musterv1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
		Spec:       musterv1.MemberClusterSpec{Accepted: accepted},
	})
}

func getMemberCluster(t *testing.T, name string) *musterv1.MemberCluster {
	t.Helper()
	var mc musterv1.MemberCluster
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: name}, &mc); err != nil {
		t.Fatal(err)
	}
	return &mc
}

// pendingCSR creates an undecided client-certificate request labelled with cluster.
func pendingCSR(t *testing.T, cluster string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "someone"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: cluster + "-", Labels: map[string]string{musterv1.ClusterNameLabel: cluster}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
		},
	}
	create(t, csr)
	return csr.Name
}

func csrConditions(t *testing.T, name string) []certificatesv1.CertificateSigningRequestCondition {
	t.Helper()
	var csr certificatesv1.CertificateSigningRequest
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: name}, &csr); err != nil {
		t.Fatal(err)
	}
	return csr.Status.Conditions
}

func TestAcceptWaitsForARegistrationAndSaysWhatIsMissing(t *testing.T) {
	absent := uniqueName("absent")
	r := musterctl("accept", absent, "--wait", "1s")
	if r.code != 1 || !strings.Contains(r.err, "error: no cluster named "+absent+" registered with this hub within 1s") {
		t.Errorf("accept of an unregistered cluster:\n%s", r)
	}

	// Registered, not accepted, no agent asking: accepted, but the command fails saying
	// the agent has not asked, and forgets any earlier join so old certificates stay out.
	quiet := uniqueName("quiet")
	memberCluster(t, quiet, false, map[string]string{identity.AgentJoinAnnotation: "old-join"})
	r = musterctl("accept", quiet, "--wait", "1s")
	if r.code != 1 || !strings.Contains(r.err, "cluster "+quiet+" is accepted, but its agent has not asked for a certificate within 1s") {
		t.Errorf("accept with no agent:\n%s", r)
	}
	mc := getMemberCluster(t, quiet)
	if !mc.Spec.Accepted {
		t.Errorf("%s is not accepted after accept", quiet)
	}
	if j, ok := mc.Annotations[identity.AgentJoinAnnotation]; ok {
		t.Errorf("accepting a denied cluster kept its old join %q", j)
	}
}

func TestAcceptOfAJoinedClusterSucceedsWithoutARequest(t *testing.T) {
	name := uniqueName("joined")
	memberCluster(t, name, true, map[string]string{identity.AgentJoinAnnotation: "join-1"})
	r := musterctl("accept", name, "--wait", "5s")
	if r.code != 0 || strings.TrimSpace(r.out) != "✓ cluster "+name+" accepted (0 certificate request(s) approved)" {
		t.Fatalf("accept of an accepted, joined cluster:\n%s", r)
	}
	if got := getMemberCluster(t, name).Annotations[identity.AgentJoinAnnotation]; got != "join-1" {
		t.Errorf("accepting an accepted cluster again changed its join to %q, want join-1", got)
	}
}

func TestDenyRevokesAcceptanceAndDeniesPendingRequests(t *testing.T) {
	name, other := uniqueName("denied"), uniqueName("bystander")
	memberCluster(t, name, true, map[string]string{identity.AgentJoinAnnotation: "join-1"})
	memberCluster(t, other, true, nil)
	pending, untouched := pendingCSR(t, name), pendingCSR(t, other)

	r := musterctl("deny", name)
	if r.code != 0 || strings.TrimSpace(r.out) != "✓ cluster "+name+" denied" {
		t.Fatalf("deny:\n%s", r)
	}
	mc := getMemberCluster(t, name)
	if mc.Spec.Accepted {
		t.Error("the denied cluster is still accepted")
	}
	if j, ok := mc.Annotations[identity.AgentJoinAnnotation]; ok {
		t.Errorf("deny kept the cluster's join %q: its certificates would work again on the next accept", j)
	}
	conds := csrConditions(t, pending)
	if len(conds) != 1 || conds[0].Type != certificatesv1.CertificateDenied || conds[0].Reason != musterv1.CSRReasonDeniedByMusterctl {
		t.Errorf("the denied cluster's pending request has conditions %+v, want one Denied %s", conds, musterv1.CSRReasonDeniedByMusterctl)
	}
	if conds := csrConditions(t, untouched); len(conds) != 0 {
		t.Errorf("deny of %s decided another cluster's request: %+v", name, conds)
	}
	if !getMemberCluster(t, other).Spec.Accepted {
		t.Errorf("deny of %s revoked %s", name, other)
	}

	// Denying again changes nothing and still succeeds; a cluster never registered fails.
	if r := musterctl("deny", name); r.code != 0 {
		t.Errorf("deny again:\n%s", r)
	}
	absent := uniqueName("absent")
	if r := musterctl("deny", absent); r.code != 1 || !strings.Contains(r.err, "no cluster of that name has registered with this hub: "+absent) {
		t.Errorf("deny of an unregistered cluster:\n%s", r)
	}
}

func TestCommandsRefuseMissingArguments(t *testing.T) {
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"accept"}, "requires at least 1 arg(s), only received 0"},
		{[]string{"deny"}, "requires at least 1 arg(s), only received 0"},
		{[]string{"unjoin", "c1"}, `required flag(s) "member-kubeconfig" not set`},
		{[]string{"unjoin", "--member-kubeconfig", "x"}, "accepts 1 arg(s), received 0"},
		{[]string{"version", "extra"}, `unknown command "extra" for "musterctl version"`},
		{[]string{"accept", "c1", "--wait", "soon"}, `invalid argument "soon" for "--wait" flag`},
	} {
		if r := musterctl(c.args...); r.code != 1 || !strings.Contains(r.err, c.stderr) {
			t.Errorf("%v: want exit 1 and %q:\n%s", c.args, c.stderr, r)
		}
	}
}

// join checks everything it is given before it installs anything: a join that fails a
// check leaves the member as it was.
func TestJoinRefusesBadInputBeforeInstallingAnything(t *testing.T) {
	const token = "abcdef.0123456789abcdef"
	hash := "sha256:" + strings.Repeat("0", 64)
	valid := func(overrides ...string) []string {
		flags := map[string]string{"--hub-apiserver": env.Config.Host, "--hub-token": token, "--hub-ca-hash": hash, "--cluster-name": "edge-1"}
		for i := 0; i+1 < len(overrides); i += 2 {
			flags[overrides[i]] = overrides[i+1]
		}
		args := []string{"join"}
		for k, v := range flags {
			args = append(args, k+"="+v)
		}
		return args
	}
	for _, c := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"flags missing", []string{"join", "--cluster-name", "edge-1"}, `required flag(s) "hub-apiserver", "hub-ca-hash", "hub-token" not set`},
		{"upper-case name", valid("--cluster-name", "Edge-1"), `--cluster-name "Edge-1" must be a DNS label of at most 49 characters`},
		{"name too long", valid("--cluster-name", strings.Repeat("a", 50)), "must be a DNS label of at most 49 characters"},
		{"name ending in a dash", valid("--cluster-name", "edge-"), `--cluster-name "edge-" must be a DNS label`},
		{"malformed token", valid("--hub-token", "abcdef"), "--hub-token: the token is malformed"},
		{"upper-case token", valid("--hub-token", "ABCDEF.0123456789abcdef"), "--hub-token: the token is malformed"},
		{"plain http hub", valid("--hub-apiserver", "http://127.0.0.1:1"), `--hub-apiserver "http://127.0.0.1:1" is not an https URL`},
		{"hash without algorithm", valid("--hub-ca-hash", strings.Repeat("0", 64)), "--hub-ca-hash"},
		{"hub not there", valid("--hub-apiserver", "https://127.0.0.1:1", "--timeout", "2s"), "cannot reach the hub at https://127.0.0.1:1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if r := musterctl(c.args...); r.code != 1 || !strings.Contains(r.err, c.stderr) {
				t.Errorf("want exit 1 and %q:\n%s", c.stderr, r)
			}
		})
	}
	// The 49-character name the check allows passes it (and fails later, at the hub).
	if r := musterctl(valid("--cluster-name", strings.Repeat("a", 49), "--hub-apiserver", "https://127.0.0.1:1", "--timeout", "1s")...); strings.Contains(r.err, "DNS label") {
		t.Errorf("a 49-character name was refused:\n%s", r)
	}
	err := env.Client.Get(t.Context(), client.ObjectKey{Name: musterv1.AgentNamespace}, &corev1.Namespace{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s after failed joins: %v, want NotFound", musterv1.AgentNamespace, err)
	}
}
