package nodefit

import (
	"crypto/sha256"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Fingerprint identifies what a Template of spec decides: two specs with the same
// fingerprint fit exactly the same nodes, so a verdict computed for one serves the other.
// It covers every input NewTemplate reads; a change there must change it too.
func Fingerprint(spec *corev1.PodSpec) [sha256.Size]byte {
	var required *corev1.NodeSelector
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil {
		required = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	pod := &corev1.Pod{Spec: *spec}
	// encoding/json sorts map keys, so equal inputs encode alike. It cannot fail on these
	// plain API types.
	data, _ := json.Marshal(struct {
		NodeName     string
		NodeSelector map[string]string
		Required     *corev1.NodeSelector
		Tolerations  []corev1.Toleration
		Requests     corev1.ResourceList
	}{spec.NodeName, spec.NodeSelector, required, spec.Tolerations, resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})})
	return sha256.Sum256(data)
}
