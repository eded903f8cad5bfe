package app_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/bootstrap"
)

// allowAnonymousClusterInfo lets anyone read kube-public/cluster-info, as the Role and
// RoleBinding muster:cluster-info-reader that init installs do (deploy/charts/muster-hub/templates/install.yaml;
// running init here would cost seconds of client-side throttling).
func allowAnonymousClusterInfo(t *testing.T) {
	t.Helper()
	meta := metav1.ObjectMeta{Namespace: metav1.NamespacePublic, Name: "muster:cluster-info-reader"}
	for _, obj := range []client.Object{
		&rbacv1.Role{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"cluster-info"}, Verbs: []string{"get"}}}},
		&rbacv1.RoleBinding{ObjectMeta: meta, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: meta.Name},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "system:anonymous"}}},
	} {
		if err := env.Client.Create(t.Context(), obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// signClusterInfo signs the hub's cluster-info with token, as the control plane's
// bootstrap signer does for every token (the test API server runs no signer).
func signClusterInfo(t *testing.T, token bootstrap.Token) {
	t.Helper()
	var cm corev1.ConfigMap
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: metav1.NamespacePublic, Name: bootstrapapi.ConfigMapClusterInfo}, &cm); err != nil {
		t.Fatal(err)
	}
	sig, err := jws.ComputeDetachedSignature(cm.Data[bootstrapapi.KubeConfigKey], token.ID, token.Secret)
	if err != nil {
		t.Fatal(err)
	}
	cm.Data[bootstrapapi.JWSSignatureKeyPrefix+token.ID] = sig
	if err := env.Client.Update(t.Context(), &cm); err != nil {
		t.Fatal(err)
	}
}

// join against a real hub: discovery reads cluster-info anonymously, checks the pin and the token's signature; each failure names the input at
// fault, and nothing is installed in the member.
func TestJoinVerifiesTheHubBeforeInstalling(t *testing.T) {
	allowAnonymousClusterInfo(t)
	publishClusterInfo(t)
	certs, err := bootstrap.ParseCA(env.Config.CAData)
	if err != nil {
		t.Fatal(err)
	}
	pin := bootstrap.CAHash(certs[0])
	signed := bootstrap.Token{ID: "sgn" + uniqueName("")[1:4], Secret: "0123456789abcdef"}
	signClusterInfo(t, signed)
	join := func(token, hash string) result {
		return musterctl("join", "--hub-apiserver", env.Config.Host, "--hub-token", token, "--hub-ca-hash", hash, "--cluster-name", "edge-1", "--timeout", "5s")
	}
	for _, c := range []struct {
		name, token, hash, stderr string
	}{
		{"unknown token", "zzzzzz.0123456789abcdef", pin, "the hub does not know bootstrap token zzzzzz: it is wrong or expired"},
		{"wrong secret", signed.ID + ".ffffffffffffffff", pin, "the secret of bootstrap token " + signed.ID + " is wrong"},
		{"wrong pin", signed.String(), "sha256:" + strings.Repeat("0", 64), "the hub's CA does not match --hub-ca-hash: the hub presents " + pin},
		// Signed but not accepted by the API server (this one does not authenticate
		// bootstrap tokens, as a hub whose token was deleted would not).
		{"token the hub refuses", signed.String(), pin, "the hub rejected bootstrap token " + signed.ID + ": it is expired or deleted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := join(c.token, c.hash)
			if r.code != 1 || r.out != "" || !strings.Contains(r.err, c.stderr) {
				t.Errorf("want exit 1, no output and %q:\n%s", c.stderr, r)
			}
		})
	}
	err = env.Client.Get(t.Context(), client.ObjectKey{Name: musterv1.AgentNamespace}, &corev1.Namespace{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s after refused joins: %v, want NotFound", musterv1.AgentNamespace, err)
	}
}

// The join command that init and token create print parses as join's flags: a user
// pasting it only fills in the cluster name.
func TestPrintedJoinCommandIsAcceptedByJoin(t *testing.T) {
	publishClusterInfo(t)
	r := musterctl("token", "create", "--cluster", "paste-me", "--ttl", "5m")
	if r.code != 0 {
		t.Fatalf("token create:\n%s", r)
	}
	args := strings.Fields(strings.TrimSpace(r.out))
	if len(args) < 2 || args[0] != "musterctl" {
		t.Fatalf("join line %q", r.out)
	}
	// Unreachable instead of the real hub, so the command stops right after its checks.
	for i := range args {
		if args[i] == env.Config.Host {
			args[i] = "https://127.0.0.1:1"
		}
	}
	got := musterctl(append(args[1:], "--timeout", "1s")...)
	if got.code != 1 || !strings.Contains(got.err, "cannot reach the hub at https://127.0.0.1:1") {
		t.Errorf("the printed join line, run:\n%s", got)
	}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: musterv1.AgentNamespace}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s after a join that could not reach the hub: %v, want NotFound", musterv1.AgentNamespace, err)
	}
}
