package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterAffinity selects member clusters. An empty ClusterAffinity selects every
// accepted cluster; clusterSelector and clusterNames together select their intersection.
type ClusterAffinity struct {
	// clusterSelector selects MemberClusters by label.
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`

	// clusterNames lists MemberClusters by name.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=49
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// Placement chooses the member clusters a fleet object runs on.
type Placement struct {
	ClusterAffinity `json:",inline"`

	// tolerations let the object be placed on clusters with matching taints, for example
	// muster.dev/unreachable. Clusters with a NoSchedule taint that is not tolerated get no
	// new work.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}
