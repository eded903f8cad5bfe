package nodefit

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestFingerprintChangesWithWhatTheTemplateReads(t *testing.T) {
	base := Fingerprint(pod())
	changes := map[string]func(*corev1.PodSpec){
		"node name":     func(p *corev1.PodSpec) { p.NodeName = "a" },
		"node selector": func(p *corev1.PodSpec) { p.NodeSelector = map[string]string{"pool": "gpu"} },
		"required affinity": func(p *corev1.PodSpec) {
			p.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpExists}}}},
			}}}
		},
		"a toleration": tolerate("dedicated", corev1.TaintEffectNoSchedule),
		"a request":    requestCPU("2"),
		"an init request": func(p *corev1.PodSpec) {
			p.InitContainers = []corev1.Container{{Name: "i", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}}}
		},
		"overhead": func(p *corev1.PodSpec) {
			p.Overhead = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
		},
	}
	for name, change := range changes {
		if Fingerprint(pod(change)) == base {
			t.Errorf("changing the %s kept the fingerprint", name)
		}
	}
	same := map[string]func(*corev1.PodSpec){
		"image":              func(p *corev1.PodSpec) { p.Containers[0].Image = "busybox" },
		"preferred affinity": func(p *corev1.PodSpec) { p.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}} },
		"a second container without requests": func(p *corev1.PodSpec) {
			p.Containers = append(p.Containers, corev1.Container{Name: "d"})
		},
	}
	for name, change := range same {
		if Fingerprint(pod(change)) != base {
			t.Errorf("changing the %s, which no check reads, changed the fingerprint", name)
		}
	}
}
