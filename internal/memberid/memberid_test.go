package memberid_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/internal/memberid"
)

func clientset(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestTheIDIsKubeSystemsUID: the ID is the UID of the member's kube-system namespace,
// the same on every read.
func TestTheIDIsKubeSystemsUID(t *testing.T) {
	var ns corev1.Namespace
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: metav1.NamespaceSystem}, &ns); err != nil {
		t.Fatal(err)
	}
	cs := clientset(t, env.Config)
	for range 2 {
		id, err := memberid.ClusterID(t.Context(), cs)
		if err != nil {
			t.Fatal(err)
		}
		if id == "" || id != string(ns.UID) {
			t.Fatalf("ClusterID = %q, want kube-system's UID %q", id, ns.UID)
		}
	}
}

// TestTheAgentMayReadTheID: the RBAC that `musterctl join` installs lets the agent read
// the ID it checks before registering.
func TestTheAgentMayReadTheID(t *testing.T) {
	cfg, err := env.AgentConfig(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	id, err := memberid.ClusterID(t.Context(), clientset(t, cfg))
	if err != nil || id == "" {
		t.Fatalf("ClusterID as the agent = %q, %v", id, err)
	}
}

// TestAReadFailureSaysWhatWasRead: a caller without the right, or a member that does not
// answer, gets an error that says the cluster ID could not be read and keeps the API's
// reason.
func TestAReadFailureSaysWhatWasRead(t *testing.T) {
	nobody, err := env.UserConfig("nobody")
	if err != nil {
		t.Fatal(err)
	}
	id, err := memberid.ClusterID(t.Context(), clientset(t, nobody))
	if !apierrors.IsForbidden(err) || id != "" {
		t.Errorf("ClusterID without RBAC = %q, %v; want Forbidden", id, err)
	}
	if err != nil && !strings.Contains(err.Error(), "cluster ID") {
		t.Errorf("error %q does not say what was read", err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	gone := &rest.Config{Host: "https://127.0.0.1:1", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	id, err = memberid.ClusterID(ctx, clientset(t, gone))
	if err == nil || id != "" || !strings.Contains(err.Error(), "cluster ID") {
		t.Errorf("ClusterID of an unreachable member = %q, %v", id, err)
	}
}
