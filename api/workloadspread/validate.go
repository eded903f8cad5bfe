// Package workloadspread holds what a WorkloadSpread means beyond its Go type: the rules it
// must meet beyond what its CRD's OpenAPI and CEL rules can say (the hub's admission
// webhook refuses an object that breaks them, with one message per broken rule), and how
// a subset shapes the pod template of its pods.
package workloadspread

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Validate checks ws against the OpenKruise WorkloadSpread rules, adapted to clusters:
// maxReplicas are all numbers or all whole percents summing to at most 100%, and when
// percents sum to less the last subset is unbounded, so every replica has a subset; each
// subset names its clusters; selectors, node terms and patches parse; and no other
// WorkloadSpread in others already spreads the same target. As in OpenKruise, a subset
// before the last may be unbounded: the subsets after it then take replicas only while
// it cannot (no cluster of it takes new ones, or an Adaptive spread skips it).
func Validate(ws *musterv1.WorkloadSpread, others []musterv1.WorkloadSpread) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	for i := range others {
		o := &others[i]
		if o.Namespace == ws.Namespace && o.Name != ws.Name && o.DeletionTimestamp == nil && o.Spec.TargetReference == ws.Spec.TargetReference {
			errs = append(errs, field.Forbidden(spec.Child("targetRef"),
				fmt.Sprintf("%s %s is already spread by WorkloadSpread %s", ws.Spec.TargetReference.Kind, ws.Spec.TargetReference.Name, o.Name)))
		}
	}
	subsets := spec.Child("subsets")
	last := len(ws.Spec.Subsets) - 1
	percents, sum := 0, 0
	for i := range ws.Spec.Subsets {
		s := &ws.Spec.Subsets[i]
		path := subsets.Index(i)
		errs = append(errs, validateSubset(s, path)...)
		if s.MaxReplicas == nil {
			continue
		}
		if s.MaxReplicas.Type == intstr.String {
			p, err := Percent(*s.MaxReplicas)
			if err != nil {
				errs = append(errs, field.Invalid(path.Child("maxReplicas"), s.MaxReplicas.StrVal, err.Error()))
				continue
			}
			percents++
			sum += p
		}
	}
	if percents > 0 && sum > 100 {
		errs = append(errs, field.Invalid(subsets, fmt.Sprintf("%d%%", sum), "the maxReplicas percents add up to more than 100%"))
	}
	if percents > 0 && sum < 100 && ws.Spec.Subsets[last].MaxReplicas != nil {
		errs = append(errs, field.Invalid(subsets.Index(last).Child("maxReplicas"), ws.Spec.Subsets[last].MaxReplicas.StrVal,
			fmt.Sprintf("the maxReplicas percents add up to %d%%: leave the last subset's maxReplicas unset so every replica has a subset", sum)))
	}
	return errs
}

// Percent reads a maxReplicas percent such as "40%".
func Percent(v intstr.IntOrString) (int, error) {
	digits, ok := strings.CutSuffix(v.StrVal, "%")
	p, err := strconv.Atoi(digits)
	if !ok || err != nil || p < 0 || p > 100 || strconv.Itoa(p) != digits {
		return 0, fmt.Errorf("want a whole percent from 0%% to 100%%, such as 40%%")
	}
	return p, nil
}

func validateSubset(s *musterv1.WorkloadSpreadSubset, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.ClusterSelector == nil && len(s.ClusterNames) == 0 {
		errs = append(errs, field.Required(path, "set clusterSelector or clusterNames to choose the subset's clusters"))
	}
	if s.ClusterSelector != nil {
		if _, err := metav1.LabelSelectorAsSelector(s.ClusterSelector); err != nil {
			errs = append(errs, field.Invalid(path.Child("clusterSelector"), s.ClusterSelector, err.Error()))
		}
	}
	if t := s.RequiredNodeSelectorTerm; t != nil {
		if _, err := nodeaffinity.NewNodeSelector(&corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{*t}}); err != nil {
			errs = append(errs, field.Invalid(path.Child("requiredNodeSelectorTerm"), t, err.Error()))
		}
	}
	if len(s.PreferredNodeSelectorTerms) > 0 {
		if _, err := nodeaffinity.NewPreferredSchedulingTerms(s.PreferredNodeSelectorTerms); err != nil {
			errs = append(errs, field.Invalid(path.Child("preferredNodeSelectorTerms"), s.PreferredNodeSelectorTerms, err.Error()))
		}
	}
	if s.Patch != nil {
		if err := checkPatch(s.Patch.Raw); err != nil {
			errs = append(errs, field.Invalid(path.Child("patch"), string(s.Patch.Raw), err.Error()))
		}
	}
	return errs
}

// checkPatch makes sure the patch applies to a pod template and yields one.
func checkPatch(raw []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return fmt.Errorf("the patch must be a JSON object: %w", err)
	}
	for k := range top {
		if k != "metadata" && k != "spec" {
			return fmt.Errorf("the patch may set only metadata and spec of the pod template, not %q", k)
		}
	}
	empty, err := json.Marshal(corev1.PodTemplateSpec{})
	if err != nil {
		return err
	}
	merged, err := strategicpatch.StrategicMergePatch(empty, raw, corev1.PodTemplateSpec{})
	if err != nil {
		return fmt.Errorf("the patch does not apply to a pod template: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(merged)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&corev1.PodTemplateSpec{}); err != nil {
		return fmt.Errorf("the patched pod template is not valid: %w", err)
	}
	return nil
}
