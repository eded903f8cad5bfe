package workloadspread_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/api/workloadspread"
)

func req(key string, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
}

func TestInject(t *testing.T) {
	base := func() *corev1.PodTemplateSpec {
		return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers:  []corev1.Container{{Name: "main", Image: "busybox"}},
			Tolerations: []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists}},
		}}
	}
	pool := corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{req("pool", "gpu")}}
	tests := []struct {
		name   string
		tmpl   func() *corev1.PodTemplateSpec
		subset musterv1.WorkloadSpreadSubset
		want   func(*corev1.PodTemplateSpec)
	}{
		{"nothing to inject", base, musterv1.WorkloadSpreadSubset{Name: "a"}, func(*corev1.PodTemplateSpec) {}},
		{
			"required term without template affinity", base,
			musterv1.WorkloadSpreadSubset{Name: "a", RequiredNodeSelectorTerm: &pool},
			func(p *corev1.PodTemplateSpec) {
				p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{pool}},
				}}
			},
		},
		{
			"required term ANDed into every template term",
			func() *corev1.PodTemplateSpec {
				p := base()
				p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
						{MatchExpressions: []corev1.NodeSelectorRequirement{req("zone", "a")}},
						{MatchExpressions: []corev1.NodeSelectorRequirement{req("zone", "b")}},
					}},
				}}
				return p
			},
			musterv1.WorkloadSpreadSubset{Name: "a", RequiredNodeSelectorTerm: &pool},
			func(p *corev1.PodTemplateSpec) {
				terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
				terms[0].MatchExpressions = append(terms[0].MatchExpressions, req("pool", "gpu"))
				terms[1].MatchExpressions = append(terms[1].MatchExpressions, req("pool", "gpu"))
			},
		},
		{
			"preferred terms and tolerations are added", base,
			musterv1.WorkloadSpreadSubset{
				Name:                       "a",
				PreferredNodeSelectorTerms: []corev1.PreferredSchedulingTerm{{Weight: 5, Preference: pool}},
				Tolerations:                []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}},
			},
			func(p *corev1.PodTemplateSpec) {
				p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
					PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 5, Preference: pool}},
				}}
				p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "spot", Operator: corev1.TolerationOpExists})
			},
		},
		{
			"the patch merges a label and a container's resources by name", base,
			musterv1.WorkloadSpreadSubset{Name: "a", Patch: &runtime.RawExtension{Raw: []byte(
				`{"metadata":{"labels":{"tier":"big"}},"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"2"}}}]}}`)}},
			func(p *corev1.PodTemplateSpec) {
				p.Labels = map[string]string{"tier": "big"}
				p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.tmpl()
			before := in.DeepCopy()
			got, err := workloadspread.Inject(in, &tc.subset)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.tmpl()
			tc.want(want)
			if !equality.Semantic.DeepEqual(got, want) {
				t.Errorf("Inject:\n got %+v\nwant %+v", got.Spec, want.Spec)
			}
			if !equality.Semantic.DeepEqual(in, before) {
				t.Errorf("Inject changed its input")
			}
		})
	}
}

func TestInjectRefusesABrokenPatch(t *testing.T) {
	_, err := workloadspread.Inject(&corev1.PodTemplateSpec{}, &musterv1.WorkloadSpreadSubset{Name: "a", Patch: &runtime.RawExtension{Raw: []byte(`{"spec":{"containers":"x"}}`)}})
	if err == nil {
		t.Error("a patch that does not fit a pod template was applied")
	}
}
