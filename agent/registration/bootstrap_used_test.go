package registration_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/musterhq/muster/agent/registration"
)

// A used join line that `musterctl join` wrote is deleted; one a tool declares (the
// muster-agent chart's, kept) is marked used instead, since the tool would make it again
// and `helm upgrade --wait` would wait for it forever. It then reads as absent, so no
// agent start or rejoin check asks the hub about it, until it holds another token: a new
// join line. A join line written after the agent read the one it used stays.
func TestUsedJoinLines(t *testing.T) {
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	joinLine := func(ns, token string, annotations map[string]string) {
		t.Helper()
		sec := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: registration.BootstrapSecret, Annotations: annotations},
			Data: map[string][]byte{
				registration.KeyHubURL: []byte("https://hub.example:6443"), registration.KeyCAHash: []byte("sha256:00"),
				registration.KeyToken: []byte(token), registration.KeyClusterName: []byte("c1"),
			},
		}
		secrets := cs.CoreV1().Secrets(ns)
		if _, err := secrets.Update(t.Context(), sec, metav1.UpdateOptions{}); apierrors.IsNotFound(err) {
			_, err = secrets.Create(t.Context(), sec, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
		} else if err != nil {
			t.Fatal(err)
		}
	}

	read := func(store *registration.Store) *registration.Bootstrap {
		t.Helper()
		b, err := store.ReadBootstrap(t.Context())
		if err != nil {
			t.Fatalf("a new join line: %v", err)
		}
		return b
	}

	t.Run("from musterctl is deleted", func(t *testing.T) {
		store := &registration.Store{Client: cs, Namespace: env.Namespace(t)}
		joinLine(store.Namespace, "abcdef.0123456789abcdef", nil)
		if err := store.DeleteBootstrap(t.Context(), read(store)); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().Secrets(store.Namespace).Get(t.Context(), registration.BootstrapSecret, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the bootstrap Secret after use: %v, want it deleted", err)
		}
	})

	t.Run("written since the read stays", func(t *testing.T) {
		store := &registration.Store{Client: cs, Namespace: env.Namespace(t)}
		joinLine(store.Namespace, "abcdef.0123456789abcdef", nil)
		used := read(store)
		joinLine(store.Namespace, "ghijkl.0123456789abcdef", nil) // musterctl join again, while the agent joined
		if err := store.DeleteBootstrap(t.Context(), used); err != nil {
			t.Fatal(err)
		}
		if b := read(store); b.Token != "ghijkl.0123456789abcdef" {
			t.Errorf("the join line written since: token %s, want it kept", b.Token)
		}
	})

	t.Run("kept is marked used and absent until another token", func(t *testing.T) {
		store := &registration.Store{Client: cs, Namespace: env.Namespace(t)}
		kept := map[string]string{registration.KeepAnnotation: "true"}
		joinLine(store.Namespace, "abcdef.0123456789abcdef", kept)
		if err := store.DeleteBootstrap(t.Context(), read(store)); err != nil {
			t.Fatal(err)
		}
		sec, err := cs.CoreV1().Secrets(store.Namespace).Get(t.Context(), registration.BootstrapSecret, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the bootstrap Secret a tool manages was deleted: %v", err)
		}
		if got := sec.Annotations[registration.UsedAnnotation]; got != "abcdef" {
			t.Errorf("%s = %q, want the token's ID abcdef", registration.UsedAnnotation, got)
		}
		if _, err := store.ReadBootstrap(t.Context()); !apierrors.IsNotFound(err) {
			t.Errorf("reading a used join line: %v, want not found", err)
		}
		// The tool applies a new join line (helm upgrade with another token).
		joinLine(store.Namespace, "ghijkl.0123456789abcdef", kept)
		if b, err := store.ReadBootstrap(t.Context()); err != nil || b.Token != "ghijkl.0123456789abcdef" {
			t.Errorf("a join line with a new token: %+v, %v; want it read", b, err)
		}
	})
}
