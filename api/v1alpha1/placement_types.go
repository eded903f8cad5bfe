package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterAffinity selects member clusters. An empty ClusterAffinity selects every
// accepted cluster; clusterSelector and clusterNames together select their intersection.
type ClusterAffinity struct {
	// clusterSelector selects MemberClusters by their labels (see `kubectl get
	// memberclusters --show-labels`). Unset selects every accepted cluster; combined with
	// clusterNames, a cluster must match both.
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`

	// clusterNames lists MemberClusters by name, at most 256. Unset selects every accepted
	// cluster; a listed cluster that does not exist or is not Available is not eligible.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=49
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// Placement chooses the member clusters a fleet object runs on: those that match the
// affinity, tolerate their taints and whose agent is Available.
type Placement struct {
	ClusterAffinity `json:",inline"`

	// tolerations let the object be placed on member clusters whose taints they match
	// (spec.taints of the MemberCluster, for example muster.dev/unreachable, which the hub
	// sets while a cluster's agent is unreachable). A cluster with a NoSchedule or NoExecute
	// taint that is not tolerated is not eligible, nor is one with a NoExecute taint
	// tolerated only for a time; PreferNoSchedule is ignored. A FleetJob's work on a
	// cluster that then gets a NoExecute taint moves to another cluster as a pod leaves a
	// node: at once when no toleration matches, after the shortest tolerationSeconds of
	// those that match, never when one matches without tolerationSeconds; without a
	// toleration of muster.dev/unreachable:NoExecute it tolerates that taint for 300
	// seconds (the hub's --default-unreachable-toleration-seconds), and admission writes
	// that toleration into a new FleetJob. BroadcastJobs do not move. At most 32.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}
