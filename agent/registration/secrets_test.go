package registration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// A restarted agent asks for the same key again, so its join is not mistaken for a
// competing one; the bootstrap Secret goes once the agent holds a certificate.
func TestJoinKeySurvivesRestartsAndBootstrapSecretIsDeleted(t *testing.T) {
	cs := fake.NewClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "muster-agent", Name: BootstrapSecret}})
	s := &Store{Client: cs, Namespace: "muster-agent"}
	first, err := s.JoinKey(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	again, err := (&Store{Client: cs, Namespace: "muster-agent"}).JoinKey(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !first.Equal(again) {
		t.Error("a second JoinKey made a new key")
	}
	for range 2 { // idempotent
		if err := s.DeleteBootstrap(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.CoreV1().Secrets("muster-agent").Get(t.Context(), BootstrapSecret, metav1.GetOptions{}); err == nil {
		t.Error("the bootstrap Secret is still there")
	}
}
