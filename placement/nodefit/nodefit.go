// Package nodefit decides whether a pod template could run on a node: the node-level
// checks Muster shares between the agent's BroadcastJob controller and the hub's
// inventory. It answers "could this pod ever be placed here", not "is there room now":
// requests are compared with the node's allocatable, not with what other pods use.
package nodefit

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	schedulinghelper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// Reason says why a node does not fit; the empty Reason means it fits.
type Reason string

const (
	Fits                  Reason = ""
	NodeNameMismatch      Reason = "NodeNameMismatch"
	NodeAffinityMismatch  Reason = "NodeAffinityMismatch"
	UntoleratedTaint      Reason = "UntoleratedTaint"
	NodeUnschedulable     Reason = "NodeUnschedulable"
	NodeNotReady          Reason = "NodeNotReady"
	InsufficientResources Reason = "InsufficientResources"
)

// Template is a pod spec prepared once for checks against many nodes.
type Template struct {
	nodeName    string
	affinity    nodeaffinity.RequiredNodeAffinity
	tolerations []corev1.Toleration
	requests    corev1.ResourceList
	reads       Reads
}

// NewTemplate prepares spec; it keeps no reference to it.
func NewTemplate(spec *corev1.PodSpec) *Template {
	pod := &corev1.Pod{Spec: *spec}
	requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	return &Template{
		nodeName:    spec.NodeName,
		affinity:    nodeaffinity.GetRequiredNodeAffinity(pod),
		tolerations: spec.Tolerations,
		requests:    requests,
		reads:       readsOf(spec, requests),
	}
}

// Check returns why node cannot run the template's pod, or Fits. It builds no message:
// the hub's inventory runs it on up to every node of the fleet per query.
func (t *Template) Check(node *corev1.Node) Reason {
	switch {
	case t.nodeName != "" && t.nodeName != node.Name:
		return NodeNameMismatch
	case !isReady(node):
		return NodeNotReady
	case node.Spec.Unschedulable && !t.toleratesUnschedulable():
		return NodeUnschedulable
	case !t.matchesAffinity(node):
		return NodeAffinityMismatch
	}
	if _, found := t.untoleratedTaint(node); found {
		return UntoleratedTaint
	}
	if _, short := t.missingResource(node); short {
		return InsufficientResources
	}
	return Fits
}

// Explain is Check with a human-readable detail for events and conditions.
func (t *Template) Explain(node *corev1.Node) (Reason, string) {
	reason := t.Check(node)
	switch reason {
	case NodeNameMismatch:
		return reason, fmt.Sprintf("the pod asks for node %s", t.nodeName)
	case NodeNotReady:
		return reason, "the node is not Ready"
	case NodeUnschedulable:
		return reason, "the node is cordoned"
	case NodeAffinityMismatch:
		return reason, "the node does not match the pod's node selector or required node affinity"
	case UntoleratedTaint:
		taint, _ := t.untoleratedTaint(node)
		return reason, fmt.Sprintf("the pod does not tolerate taint %s", taint.ToString())
	case InsufficientResources:
		name, _ := t.missingResource(node)
		want, have := t.requests[name], node.Status.Allocatable[name]
		return reason, fmt.Sprintf("the pod requests %s %s, the node has %s allocatable", want.String(), name, have.String())
	}
	return reason, ""
}

// matchesAffinity reports whether node matches the pod's node selector and required node
// affinity. A malformed selector matches nothing; the API server rejects those, so only a
// template that bypassed validation gets here.
func (t *Template) matchesAffinity(node *corev1.Node) bool {
	ok, _ := t.affinity.Match(node)
	return ok
}

func (t *Template) untoleratedTaint(node *corev1.Node) (corev1.Taint, bool) {
	if len(node.Spec.Taints) == 0 {
		return corev1.Taint{}, false
	}
	return schedulinghelper.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, t.tolerations, blocksScheduling, true)
}

// missingResource returns a resource the pod requests more of than the node can allocate.
func (t *Template) missingResource(node *corev1.Node) (corev1.ResourceName, bool) {
	for name, want := range t.requests {
		if want.IsZero() {
			continue
		}
		if have, ok := node.Status.Allocatable[name]; !ok || have.Cmp(want) < 0 {
			return name, true
		}
	}
	return "", false
}

// blocksScheduling keeps the taints that stop a pod from being placed: NoSchedule and
// NoExecute. PreferNoSchedule only lowers a node's score.
func blocksScheduling(t *corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}

// toleratesUnschedulable mirrors the scheduler: a cordoned node still takes pods that
// tolerate the unschedulable taint (DaemonSet pods do).
func (t *Template) toleratesUnschedulable() bool {
	taint := &corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}
	return schedulinghelper.TolerationsTolerateTaint(klog.Background(), t.tolerations, taint, true)
}

func isReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Keeps reports whether a pod of the template that already runs on node may stay there.
// It is weaker than Check, as the kubelet and the taint manager are: a cordoned, NotReady,
// NoSchedule-tainted or fuller node keeps its pods; a node that no longer matches the
// pod's node name or required affinity, or that has an untolerated NoExecute taint, does
// not.
func (t *Template) Keeps(node *corev1.Node) bool {
	if t.nodeName != "" && t.nodeName != node.Name {
		return false
	}
	if ok, _ := t.affinity.Match(node); !ok {
		return false
	}
	_, evicted := schedulinghelper.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, t.tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoExecute
	}, true)
	return !evicted
}
