// Package clusters decides which member clusters a fleet object's placement allows: the
// cluster-level counterpart of nodefit, shared by every hub controller that places work.
package clusters

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	schedulinghelper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Why a cluster is not eligible.
const (
	NotAccepted      = "NotAccepted"
	Leaving          = "Leaving"
	NotNamed         = "NotNamed"
	SelectorMismatch = "SelectorMismatch"
	UntoleratedTaint = "UntoleratedTaint"
	NotAvailable     = "NotAvailable"
	InvalidPlacement = "InvalidPlacement"
)

// Check returns "" when placement allows new work on mc, or the reason it does not and a
// detail for conditions. A nil placement allows every cluster.
func Check(placement *musterv1.Placement, mc *musterv1.MemberCluster) (string, string) {
	if !mc.Spec.Accepted {
		return NotAccepted, "the cluster is not accepted"
	}
	if mc.DeletionTimestamp != nil {
		return Leaving, "the cluster is leaving the fleet"
	}
	if placement != nil {
		if len(placement.ClusterNames) > 0 && !slices.Contains(placement.ClusterNames, mc.Name) {
			return NotNamed, "the cluster is not in clusterNames"
		}
		if placement.ClusterSelector != nil {
			sel, err := metav1.LabelSelectorAsSelector(placement.ClusterSelector)
			if err != nil {
				return InvalidPlacement, fmt.Sprintf("clusterSelector: %v", err)
			}
			if !sel.Matches(labels.Set(mc.Labels)) {
				return SelectorMismatch, "the cluster's labels do not match clusterSelector"
			}
		}
	}
	var tolerations []corev1.Toleration
	if placement != nil {
		tolerations = placement.Tolerations
	}
	if taint, found := schedulinghelper.FindMatchingUntoleratedTaint(klog.Background(), mc.Spec.Taints, tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, true); found {
		return UntoleratedTaint, fmt.Sprintf("the placement does not tolerate taint %s", taint.ToString())
	}
	// New work never goes where it would have to leave: a NoExecute taint tolerated only
	// for tolerationSeconds keeps it off, as much as one not tolerated at all.
	for i := range mc.Spec.Taints {
		t := &mc.Spec.Taints[i]
		if _, forever := tolerated(tolerations, t); t.Effect == corev1.TaintEffectNoExecute && !forever {
			return UntoleratedTaint, fmt.Sprintf("the placement tolerates taint %s only for a time", t.ToString())
		}
	}
	if !meta.IsStatusConditionTrue(mc.Status.Conditions, musterv1.MemberClusterAvailable) {
		return NotAvailable, "the cluster's agent is not available"
	}
	return "", ""
}

// Eligible returns the names of the clusters placement allows, sorted, and a count of the
// others by reason.
func Eligible(placement *musterv1.Placement, members []musterv1.MemberCluster) ([]string, map[string]int) {
	var names []string
	excluded := map[string]int{}
	for i := range members {
		if reason, _ := Check(placement, &members[i]); reason != "" {
			excluded[reason]++
			continue
		}
		names = append(names, members[i].Name)
	}
	slices.Sort(names)
	return names, excluded
}

// Holding returns the names of the clusters, sorted, where work placed earlier may stay:
// those the placement still selects and that are still in the fleet, including the ones
// that are unavailable or tainted for now. Eligible decides where new work goes; a health
// blip must not tear down work that runs.
func Holding(placement *musterv1.Placement, members []musterv1.MemberCluster) []string {
	var names []string
	for i := range members {
		if reason, _ := Check(placement, &members[i]); reason == "" || reason == NotAvailable || reason == UntoleratedTaint {
			names = append(names, members[i].Name)
		}
	}
	slices.Sort(names)
	return names
}
