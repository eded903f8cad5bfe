package workloadspread

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Inject returns the pod template of a subset's pods: tmpl with the subset's patch
// merged in strategically, its required node term ANDed into every required term of the
// template (so the pods stay within the subset whatever else they require), its
// preferred terms and tolerations added. tmpl is not changed.
func Inject(tmpl *corev1.PodTemplateSpec, s *musterv1.WorkloadSpreadSubset) (*corev1.PodTemplateSpec, error) {
	out := tmpl.DeepCopy()
	if s.Patch != nil && len(s.Patch.Raw) > 0 {
		base, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("encoding the pod template: %w", err)
		}
		merged, err := strategicpatch.StrategicMergePatch(base, s.Patch.Raw, corev1.PodTemplateSpec{})
		if err != nil {
			return nil, fmt.Errorf("applying subset %s's patch: %w", s.Name, err)
		}
		out = &corev1.PodTemplateSpec{}
		if err := json.Unmarshal(merged, out); err != nil {
			return nil, fmt.Errorf("decoding subset %s's patched pod template: %w", s.Name, err)
		}
	}
	spec := &out.Spec
	if s.RequiredNodeSelectorTerm != nil || len(s.PreferredNodeSelectorTerms) > 0 {
		if spec.Affinity == nil {
			spec.Affinity = &corev1.Affinity{}
		}
		if spec.Affinity.NodeAffinity == nil {
			spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
		}
	}
	if t := s.RequiredNodeSelectorTerm; t != nil {
		na := spec.Affinity.NodeAffinity
		if na.RequiredDuringSchedulingIgnoredDuringExecution == nil || len(na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) == 0 {
			na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{*t.DeepCopy()}}
		} else {
			// Terms are ORed and the requirements within a term ANDed: adding the subset's
			// requirements to every term keeps each alternative inside the subset.
			terms := na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
			for i := range terms {
				terms[i].MatchExpressions = append(terms[i].MatchExpressions, t.DeepCopy().MatchExpressions...)
				terms[i].MatchFields = append(terms[i].MatchFields, t.DeepCopy().MatchFields...)
			}
		}
	}
	if len(s.PreferredNodeSelectorTerms) > 0 {
		na := spec.Affinity.NodeAffinity
		for _, p := range s.PreferredNodeSelectorTerms {
			na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution, *p.DeepCopy())
		}
	}
	for _, t := range s.Tolerations {
		spec.Tolerations = append(spec.Tolerations, *t.DeepCopy())
	}
	return out, nil
}
