//go:build e2ekind

package kindfleet

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/agent/registration"
	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

// TestAgentCredentialsReachOnlyTheirOwnCluster takes what someone holding member1 holds —
// its agent's key and certificate, from the Secret the agent keeps in member1 — and
// tries member2's objects on the hub with them: each is Forbidden, while member1's own
// objects answer, so the denials are about scope and not broken credentials.
func TestAgentCredentialsReachOnlyTheirOwnCluster(t *testing.T) {
	muster(t)
	ctx := t.Context()
	member1, other := fleet.Members[0], musterv1.MemberNamespace(fleet.Members[1].Name)
	stolen := agentClientFrom(t, member1)
	attempts := map[string]func(ctx context.Context) error{
		"list member2's Works": func(ctx context.Context) error {
			return stolen.List(ctx, &musterv1.WorkList{}, client.InNamespace(other))
		},
		"create a Work in member2's namespace": func(ctx context.Context) error {
			return stolen.Create(ctx, &musterv1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "intruder"}})
		},
		"get member2's MemberCluster": func(ctx context.Context) error {
			return stolen.Get(ctx, types.NamespacedName{Name: fleet.Members[1].Name}, &musterv1.MemberCluster{})
		},
		"list member2's NodeSlices": func(ctx context.Context) error {
			return stolen.List(ctx, &musterv1.NodeSliceList{}, client.InNamespace(other))
		},
		"list every cluster's certificate requests": func(ctx context.Context) error {
			return stolen.List(ctx, &certificatesv1.CertificateSigningRequestList{})
		},
	}
	for name, attempt := range attempts {
		if err := attempt(ctx); !apierrors.IsForbidden(err) {
			t.Errorf("%s with member1's agent credentials: got %v, want Forbidden", name, err)
		}
	}
	if err := stolen.List(ctx, &musterv1.WorkList{}, client.InNamespace(musterv1.MemberNamespace(member1.Name))); err != nil {
		t.Errorf("control: member1's credentials cannot list member1's own Works: %v", err)
	}
}

// TestWorkIsAppliedInItsMemberAndRemovedWithIt delivers a Work to member1 through the
// agent's pod: the ConfigMap appears in member1 with the Work Applied, and deleting the
// Work deletes it there.
func TestWorkIsAppliedInItsMemberAndRemovedWithIt(t *testing.T) {
	muster(t)
	ctx := t.Context()
	member := fleet.Members[0]
	cm := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "delivered", "namespace": "default"},
		"data":     map[string]any{"from": "the hub"},
	}
	raw, err := json.Marshal(cm)
	if err != nil {
		t.Fatal(err)
	}
	work := &musterv1.Work{
		ObjectMeta: metav1.ObjectMeta{Name: "delivered", Namespace: musterv1.MemberNamespace(member.Name)},
		Spec:       musterv1.WorkSpec{Manifests: []musterv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}},
	}
	if err := fleet.Hub.Client.Create(ctx, work); err != nil {
		t.Fatal(err)
	}
	err = framework.Until(ctx, time.Minute, "the Work applied in "+member.Name, func(ctx context.Context) (bool, string, error) {
		var got musterv1.Work
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(work), &got); err != nil {
			return false, err.Error(), nil
		}
		var delivered corev1.ConfigMap
		if err := member.Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "delivered"}, &delivered); err != nil {
			return false, err.Error(), nil
		}
		applied := meta.IsStatusConditionTrue(got.Status.Conditions, musterv1.WorkApplied)
		return applied && delivered.Data["from"] == "the hub", fmt.Sprintf("Applied %t, data %v", applied, delivered.Data), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := fleet.Hub.Client.Delete(ctx, work); err != nil {
		t.Fatal(err)
	}
	err = framework.Until(ctx, time.Minute, "the ConfigMap gone from "+member.Name+" with its Work", func(ctx context.Context) (bool, string, error) {
		err := member.Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "delivered"}, &corev1.ConfigMap{})
		return apierrors.IsNotFound(err), "still there", client.IgnoreNotFound(err)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// agentClientFrom builds a hub client from the credentials the agent keeps in member m,
// as anyone able to read that Secret could.
func agentClientFrom(t *testing.T, m *framework.Cluster) client.Client {
	t.Helper()
	store := registration.Store{Client: m.Clientset, Namespace: musterv1.AgentNamespace}
	creds, err := store.ReadCredentials(t.Context())
	if err != nil || creds == nil {
		t.Fatalf("reading %s's agent credentials: %v", m.Name, err)
	}
	cfg := &rest.Config{Host: creds.HubURL, TLSClientConfig: rest.TLSClientConfig{CAData: creds.CA, CertData: creds.CertPEM, KeyData: creds.KeyPEM}}
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
