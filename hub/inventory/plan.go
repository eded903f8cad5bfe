package inventory

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// lookup names the nodes that carry label key, with one of values, or with any value when
// anyValue is set. Every node that matches the requirement it came from is among them.
type lookup struct {
	key      string
	values   []string
	anyValue bool
}

// plan says which nodes an eligible-node query must check. The pod's required node
// affinity is an OR of terms, each ANDed with its nodeSelector; a node can match only an
// alternative whose every lookup holds it, so the union over alternatives of any one
// lookup each holds every matching node. scan means some alternative has no lookup and
// every node must be checked.
type plan struct {
	scan         bool
	alternatives [][]lookup
}

// planFor reads the requirements that a label index can serve: nodeSelector pairs, and In
// and Exists expressions of required node-affinity terms. NotIn, DoesNotExist, Gt, Lt and
// matchFields narrow nothing here; nodefit's check applies them to the candidates.
func planFor(spec *corev1.PodSpec) plan {
	base := selectorLookups(spec.NodeSelector)
	var required *corev1.NodeSelector
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil {
		required = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if required == nil {
		return planOf([][]lookup{base})
	}
	alternatives := make([][]lookup, 0, len(required.NodeSelectorTerms))
	for i := range required.NodeSelectorTerms {
		term := slices.Clip(base)
		for _, r := range required.NodeSelectorTerms[i].MatchExpressions {
			if l, ok := expressionLookup(r); ok {
				term = append(term, l)
			}
		}
		alternatives = append(alternatives, term)
	}
	return planOf(alternatives)
}

func planOf(alternatives [][]lookup) plan {
	if len(alternatives) == 0 {
		// A required affinity without terms matches nothing; scanning keeps that to nodefit.
		return plan{scan: true}
	}
	for _, alt := range alternatives {
		if len(alt) == 0 {
			return plan{scan: true}
		}
	}
	return plan{alternatives: alternatives}
}

// selectorLookups turns nodeSelector pairs into lookups, sorted by key so plans compare.
// The empty key is left out: the index holds no empty keys.
func selectorLookups(selector map[string]string) []lookup {
	out := make([]lookup, 0, len(selector))
	for k, v := range selector {
		if k != "" {
			out = append(out, lookup{key: k, values: []string{v}})
		}
	}
	slices.SortFunc(out, func(a, b lookup) int { return strings.Compare(a.key, b.key) })
	return out
}

func expressionLookup(r corev1.NodeSelectorRequirement) (lookup, bool) {
	if r.Key == "" {
		return lookup{}, false
	}
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		// In without values is invalid and matches nothing; an empty lookup says so.
		return lookup{key: r.Key, values: r.Values}, true
	case corev1.NodeSelectorOpExists:
		return lookup{key: r.Key, anyValue: true}, true
	}
	return lookup{}, false
}
