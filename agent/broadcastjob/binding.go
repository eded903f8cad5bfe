package broadcastjob

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Binding is how the agent puts a job's pod on the node it chose.
type Binding string

const (
	// BindingAuto binds a pod by spec.nodeName when its template asks for nothing the
	// agent's own node check does not already decide, and through the scheduler
	// otherwise. A directly bound pod skips a trip through the scheduler: on a busy
	// control plane that is most of the time between creating a job's pods and their
	// start.
	BindingAuto Binding = "auto"
	// BindingScheduler always leaves the pod to the scheduler, with a required node
	// affinity to the one node (as DaemonSet pods are placed).
	BindingScheduler Binding = "scheduler"
)

// Set implements pflag.Value.
func (b *Binding) Set(s string) error {
	switch Binding(s) {
	case BindingAuto, BindingScheduler:
		*b = Binding(s)
		return nil
	}
	return fmt.Errorf("unknown binding %q: want %q or %q", s, BindingAuto, BindingScheduler)
}

func (b *Binding) String() string { return string(*b) }

// Type implements pflag.Value.
func (b *Binding) Type() string { return "binding" }

// schedulerNeeded says why pods of spec must be admitted by the scheduler, or "" when the
// agent's node check (nodefit: node selector and required node affinity, taints,
// cordoning, readiness) covers what the scheduler would check.
//
// The scheduler knows what the agent does not: the other pods on a node (their resource
// requests, host ports, inter-pod affinity, topology spread), volumes it must bind or
// count against a node's limits, claims, gates, and other schedulers. A template using
// any of them goes through the scheduler, which leaves a pod that does not fit Pending;
// the kubelet, handed a pod directly, would reject it as Failed instead. What remains
// with direct binding is the kubelet's own admission: a node already at its pod limit
// rejects the pod (OutOfpods), where the scheduler would wait.
func schedulerNeeded(spec *corev1.PodSpec) string {
	switch {
	case spec.SchedulerName != "" && spec.SchedulerName != corev1.DefaultSchedulerName:
		return "spec.schedulerName names another scheduler"
	case len(spec.SchedulingGates) > 0:
		return "the template has scheduling gates"
	case spec.RuntimeClassName != nil || spec.Overhead != nil:
		return "a runtime class may add overhead to the pod's requests"
	case spec.Resources != nil && (len(spec.Resources.Requests) > 0 || len(spec.Resources.Limits) > 0):
		return "the template requests resources"
	case len(spec.ResourceClaims) > 0:
		return "the template claims resources"
	case spec.Affinity != nil && (spec.Affinity.PodAffinity != nil || spec.Affinity.PodAntiAffinity != nil):
		return "the template has inter-pod affinity"
	case len(spec.TopologySpreadConstraints) > 0:
		return "the template has topology spread constraints"
	}
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		// Limits alone count: the API server copies them into empty requests.
		if len(c.Resources.Requests) > 0 || len(c.Resources.Limits) > 0 {
			return fmt.Sprintf("container %s requests resources", c.Name)
		}
		for _, p := range c.Ports {
			if p.HostPort != 0 {
				return fmt.Sprintf("container %s uses host port %d", c.Name, p.HostPort)
			}
		}
	}
	for _, v := range spec.Volumes {
		if !nodeLocalVolume(v.VolumeSource) {
			return fmt.Sprintf("volume %s must be placed by the scheduler", v.Name)
		}
	}
	return ""
}

// nodeLocalVolume reports whether a volume needs nothing from the scheduler: it is made
// on the node from what the pod carries or the API server holds.
func nodeLocalVolume(v corev1.VolumeSource) bool {
	return v.EmptyDir != nil || v.ConfigMap != nil || v.Secret != nil || v.DownwardAPI != nil ||
		v.Projected != nil || v.HostPath != nil || v.Image != nil
}
