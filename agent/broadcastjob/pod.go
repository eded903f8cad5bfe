package broadcastjob

import (
	"fmt"
	"hash/fnv"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// PodName is the one name a job's pod on node can have. The API server refuses a second
// pod of that name, so no node gets two pods of a job even when the controller restarts
// or its cache lags.
func PodName(job, node string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(node))
	return fmt.Sprintf("%s-%s", job, strconv.FormatUint(h.Sum64(), 36))
}

// newPod builds the job's pod for node.
//
// The pod is tied to its node by a required node-affinity term on metadata.name, as
// DaemonSet pods are. Unless direct, it is left to the scheduler, which then still admits
// it (room, ports, volumes, preemption): a node that is momentarily full leaves the pod
// Pending instead of the kubelet rejecting it as Failed. A direct pod is bound by
// spec.nodeName as well, for templates where the agent's node check is all the scheduler
// would do (see schedulerNeeded); the kubelet checks the same affinity term on admission.
func newPod(job *musterv1.BroadcastJob, node string, direct bool) *corev1.Pod {
	tmpl := job.Spec.Template.DeepCopy()
	labels := tmpl.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	labels[musterv1.ControllerLabel] = "broadcastjob"
	labels[musterv1.BroadcastJobNameLabel] = job.Name
	labels[musterv1.BroadcastJobUIDLabel] = string(job.UID)
	annotations := tmpl.Annotations
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[musterv1.NodeAnnotation] = node
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            PodName(job.Name, node),
			Namespace:       job.Namespace,
			Labels:          labels,
			Annotations:     annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, musterv1.GroupVersion.WithKind("BroadcastJob"))},
		},
		Spec: tmpl.Spec,
	}
	bindToNode(&pod.Spec, node)
	if direct {
		pod.Spec.NodeName = node
	}
	return pod
}

// bindToNode replaces the pod's required node affinity by a single term naming node. The
// node already matched the original terms when it was chosen, so nothing is lost; the
// preferred terms stay.
func bindToNode(spec *corev1.PodSpec, node string) {
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
		}},
	}
}
