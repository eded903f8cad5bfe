package shards

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psaapi "k8s.io/pod-security-admission/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/podsecurity"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// PodSecurityOf returns the value of podsecurity.WorkAnnotation for Works whose objects
// live in hub namespace ns, read with c: the labels the agent puts on the member namespaces
// it creates. They are the namespace's levels, with defaultLevel (empty:
// podsecurity.DefaultLevel) for an enforce level it does not name, as the hub's webhook
// applies them. A Work carries the labels its namespace had when the hub last wrote it.
func PodSecurityOf(ctx context.Context, c client.Reader, defaultLevel psaapi.Level, ns string) (string, error) {
	var obj corev1.Namespace
	if err := c.Get(ctx, client.ObjectKey{Name: ns}, &obj); err != nil {
		return "", fmt.Errorf("reading namespace %s for its Pod Security labels: %w", ns, err)
	}
	// Labels that do not parse resolve as the members' API servers would resolve them
	// (the webhook warned about them), and the members get the resolved levels.
	policy, _ := podsecurity.Resolve(obj.Labels, defaultLevel)
	return podsecurity.Encode(podsecurity.MemberLabels(obj.Labels, policy)), nil
}

// SetPodSecurity puts value, PodSecurityOf's, on w.
func SetPodSecurity(w *musterv1.Work, value string) {
	metav1.SetMetaDataAnnotation(&w.ObjectMeta, podsecurity.WorkAnnotation, value)
}
