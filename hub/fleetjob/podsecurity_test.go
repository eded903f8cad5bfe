package fleetjob_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/podsecurity"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// The Works of a FleetJob carry the Pod Security labels of its hub namespace, resolved as
// the hub's webhook resolves them, for the agents to put on the member namespaces they
// create: the default level when the namespace names none.
func TestWorksCarryTheNamespacesPodSecurityLabels(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		want   string
	}{
		{name: "unlabelled", want: "pod-security.kubernetes.io/enforce-version=latest,pod-security.kubernetes.io/enforce=baseline"},
		{name: "labelled", labels: map[string]string{
			"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/audit": "restricted", "pod-security.kubernetes.io/audit-version": "v1.35", "team": "a",
		}, want: "pod-security.kubernetes.io/audit-version=v1.35,pod-security.kubernetes.io/audit=restricted," +
			"pod-security.kubernetes.io/enforce-version=latest,pod-security.kubernetes.io/enforce=restricted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock.SetTime(time.Now().Truncate(time.Second))
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "pod-security-" + tc.name, Labels: tc.labels}}
			if err := env.Client.Create(t.Context(), ns); err != nil {
				t.Fatal(err)
			}
			f := &fixture{t: t, ns: ns.Name}
			f.c1 = f.member("1")
			f.create(f.workers(1))
			envtest.Eventually(t, "the shard's Work", func() (bool, string) {
				var list musterv1.WorkList
				if err := env.Client.List(t.Context(), &list, client.MatchingLabels{musterv1.FleetJobNamespaceLabel: f.ns}); err != nil || len(list.Items) == 0 {
					return false, "no Work"
				}
				got := list.Items[0].Annotations[podsecurity.WorkAnnotation]
				return got == tc.want, got
			})
		})
	}
}
