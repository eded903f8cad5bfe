package webhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/pod-security-admission/policy"
	"k8s.io/utils/ptr"

	"github.com/musterhq/muster/api/podsecurity"
)

// evaluate reports each level as upstream's admission does: the enforce level refuses,
// warn warns only about what is not refused, audit notes whatever breaks its level.
func TestEvaluate(t *testing.T) {
	e, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	plain := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}}
	privileged := plain.DeepCopy()
	privileged.Spec.HostNetwork = true
	privileged.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	const (
		baselineRefusal   = `spec.template.spec: Forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true), privileged (container "main" must not set securityContext.privileged=true)`
		restrictedFinding = `spec.template.spec: Forbidden: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "main" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "main" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "main" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "main" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
	)
	tests := []struct {
		name                       string
		labels                     map[string]string
		pod                        *corev1.PodTemplateSpec
		refusals, warnings, audits []string
	}{
		{name: "plain pod, unlabelled", pod: plain},
		{name: "privileged pod, unlabelled", pod: privileged, refusals: []string{baselineRefusal}},
		{name: "privileged pod, privileged namespace", labels: map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}, pod: privileged},
		{name: "plain pod, warn restricted", labels: map[string]string{"pod-security.kubernetes.io/warn": "restricted"}, pod: plain,
			warnings: []string{restrictedFinding}},
		{name: "plain pod, audit restricted", labels: map[string]string{"pod-security.kubernetes.io/audit": "restricted"}, pod: plain,
			audits: []string{restrictedFinding}},
		{name: "refused: no warning, still audited", pod: privileged,
			labels:   map[string]string{"pod-security.kubernetes.io/warn": "restricted", "pod-security.kubernetes.io/audit": "baseline"},
			refusals: []string{baselineRefusal}, audits: []string{`spec.template.spec: Forbidden: would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true), privileged (container "main" must not set securityContext.privileged=true)`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := podsecurity.Resolve(tc.labels, "")
			f := psaCheck{evaluator: e, policy: p}.evaluate(field.NewPath("spec", "template"), tc.pod)
			for _, l := range []struct {
				what string
				want []string
				got  field.ErrorList
			}{{"refusals", tc.refusals, f.refusals}, {"warnings", tc.warnings, f.warnings}, {"audits", tc.audits, f.audits}} {
				var got []string
				for _, e := range l.got {
					got = append(got, e.Error())
				}
				if diff := cmp.Diff(l.want, got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", l.what, diff)
				}
			}
		})
	}
}
