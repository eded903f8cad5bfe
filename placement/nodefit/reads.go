package nodefit

import corev1 "k8s.io/api/core/v1"

// Reads is what a Template's Check reads of a node beyond its readiness, its cordon and its
// taints, which it always reads. Two nodes alike in all of that get the same verdict, so a
// caller checking many nodes may check one node for each kind.
type Reads struct {
	// Name: a nodeName or a matchFields requirement compares the node's name.
	Name bool
	// Requests are the pod's requests that are not zero. Check reads a node's allocatable
	// only as whether it holds each of them: has the resource, at least as much.
	Requests corev1.ResourceList
	// Labels maps each label key that the node selector or a required affinity term names
	// to how its value is read. A node without the key reads differently from one with it.
	Labels map[string]LabelRead
}

// LabelRead is how requirements on one label key read a node's value.
type LabelRead struct {
	// Values are the values the requirements compare with (nodeSelector, In, NotIn): any
	// two values outside them read alike.
	Values []string
	// ByValue: some requirement reads the value itself (Gt, Lt, an unknown operator), so
	// every value reads differently.
	ByValue bool
}

// readsOf says what Check reads for spec; it follows what NewTemplate keeps.
func readsOf(spec *corev1.PodSpec, requests corev1.ResourceList) Reads {
	r := Reads{Name: spec.NodeName != "", Labels: map[string]LabelRead{}, Requests: corev1.ResourceList{}}
	for name, q := range requests {
		if !q.IsZero() {
			r.Requests[name] = q
		}
	}
	for k, v := range spec.NodeSelector {
		r.readLabel(k, []string{v}, false)
	}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			if len(term.MatchFields) > 0 {
				r.Name = true
			}
			for _, req := range term.MatchExpressions {
				switch req.Operator {
				case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
					r.readLabel(req.Key, req.Values, false)
				case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
					r.readLabel(req.Key, nil, false)
				default:
					r.readLabel(req.Key, nil, true)
				}
			}
		}
	}
	return r
}

func (r *Reads) readLabel(key string, values []string, byValue bool) {
	l := r.Labels[key]
	l.Values = append(l.Values, values...)
	l.ByValue = l.ByValue || byValue
	r.Labels[key] = l
}

// Reads says what Check reads of a node beyond its readiness, cordon and taints.
func (t *Template) Reads() Reads { return t.reads }
