package broadcastjob

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

func TestSchedulerNeeded(t *testing.T) {
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	container := func(mutate ...func(*corev1.Container)) corev1.Container {
		c := corev1.Container{Name: "c", Image: "busybox"}
		for _, m := range mutate {
			m(&c)
		}
		return c
	}
	for _, tc := range []struct {
		name string
		spec corev1.PodSpec
		// why is a fragment of the reason, or "" when the agent may bind directly.
		why string
	}{
		{name: "plain", spec: corev1.PodSpec{Containers: []corev1.Container{container()}}},
		{name: "node selector, tolerations, node affinity and local volumes are the agent's", spec: corev1.PodSpec{
			NodeSelector: map[string]string{"pool": "a"},
			Tolerations:  []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpExists}}}},
			}}},
			Volumes: []corev1.Volume{
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}},
				{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/log"}}},
			},
			SchedulerName: corev1.DefaultSchedulerName,
			Containers:    []corev1.Container{container(func(c *corev1.Container) { c.Ports = []corev1.ContainerPort{{ContainerPort: 80}} })},
		}},
		{name: "requests", why: "requests resources", spec: corev1.PodSpec{Containers: []corev1.Container{container(func(c *corev1.Container) { c.Resources.Requests = cpu })}}},
		{name: "limits alone become requests", why: "requests resources", spec: corev1.PodSpec{Containers: []corev1.Container{container(func(c *corev1.Container) { c.Resources.Limits = cpu })}}},
		{name: "an init container's requests", why: "requests resources", spec: corev1.PodSpec{
			InitContainers: []corev1.Container{container(func(c *corev1.Container) { c.Resources.Requests = cpu })},
			Containers:     []corev1.Container{container()},
		}},
		{name: "pod-level resources", why: "requests resources", spec: corev1.PodSpec{Resources: &corev1.ResourceRequirements{Requests: cpu}, Containers: []corev1.Container{container()}}},
		{name: "host port", why: "host port 8080", spec: corev1.PodSpec{Containers: []corev1.Container{container(func(c *corev1.Container) {
			c.Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
		})}}},
		{name: "claimed volume", why: "volume data", spec: corev1.PodSpec{Containers: []corev1.Container{container()}, Volumes: []corev1.Volume{
			{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
		}}},
		{name: "inline CSI volume counts against node limits", why: "volume csi", spec: corev1.PodSpec{Containers: []corev1.Container{container()}, Volumes: []corev1.Volume{
			{Name: "csi", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d"}}},
		}}},
		{name: "pod anti-affinity", why: "inter-pod affinity", spec: corev1.PodSpec{Containers: []corev1.Container{container()}, Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{}}}},
		{name: "topology spread", why: "topology spread", spec: corev1.PodSpec{Containers: []corev1.Container{container()}, TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1}}}},
		{name: "another scheduler", why: "another scheduler", spec: corev1.PodSpec{Containers: []corev1.Container{container()}, SchedulerName: "volcano"}},
		{name: "scheduling gates", why: "scheduling gates", spec: corev1.PodSpec{Containers: []corev1.Container{container()}, SchedulingGates: []corev1.PodSchedulingGate{{Name: "wait"}}}},
		{name: "runtime class", why: "runtime class", spec: corev1.PodSpec{Containers: []corev1.Container{container()}, RuntimeClassName: ptr.To("gvisor")}},
		{name: "resource claims", why: "claims resources", spec: corev1.PodSpec{Containers: []corev1.Container{container()}, ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := schedulerNeeded(&tc.spec)
			if tc.why == "" && got != "" || tc.why != "" && !strings.Contains(got, tc.why) {
				t.Errorf("schedulerNeeded = %q, want a reason containing %q", got, tc.why)
			}
		})
	}
}

func TestBindingFlag(t *testing.T) {
	var b Binding
	for _, ok := range []string{"auto", "scheduler"} {
		if err := b.Set(ok); err != nil || b.String() != ok {
			t.Errorf("Set(%q) = %v, value %q", ok, err, b)
		}
	}
	if err := b.Set("nodeName"); err == nil {
		t.Error("Set(nodeName) was accepted")
	}
}
