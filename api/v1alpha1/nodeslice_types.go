package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxNodesPerSlice bounds a NodeSlice so that one object stays far below etcd's size limit
// even with many labels per node.
const MaxNodesPerSlice = 500

// NodeShape is what many nodes of one slice have in common: in a node pool, every node
// of an instance type in a zone has the same labels but its hostname, the same taints and
// the same allocatable resources. A slice carries each shape once and each node names
// its own, so that a slice of 500 nodes of a few pools holds their labels a few times
// rather than 500: smaller to store, and cheaper for the API server to take each time a
// node's change rewrites the slice.
type NodeShape struct {
	// labels every node of this shape carries; a node's own labels are added to them.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// taints every node of this shape carries; a node's own taints follow them.
	// +optional
	// +listType=atomic
	Taints []corev1.Taint `json:"taints,omitempty"`

	// allocatable resources of every node of this shape; a node's own allocatable
	// resources replace the same resources here.
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
}

// NodeInfo is what hub placement needs to know about one member node: what its shape
// says, if it names one, and what it says itself.
type NodeInfo struct {
	// name of the node in its member cluster.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// shape is the index, in the slice's shapes, of the labels, taints and allocatable
	// resources this node shares with others; unset, the node has only its own.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=499
	Shape *int32 `json:"shape,omitempty"`

	// labels of the node, matched by pod templates' nodeSelector and node affinity: its
	// own, added to (and over) those of its shape.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// taints of the node, matched against pod templates' tolerations: its own, after
	// those of its shape.
	// +optional
	// +listType=atomic
	Taints []corev1.Taint `json:"taints,omitempty"`

	// allocatable resources of the node, which placement compares with pod requests: its
	// own, in place of the same resources of its shape.
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`

	// unschedulable is true for a cordoned node, which takes no new pods.
	// +optional
	Unschedulable bool `json:"unschedulable,omitempty"`

	// ready is true while the node's Ready condition is True.
	// +optional
	Ready bool `json:"ready,omitempty"`
}

// NodeSlice holds part of one member's node inventory, written by that member's agent in
// its muster-member-<cluster> namespace and read by hub placement. Like an EndpointSlice it
// is plain data: it has no spec and no status, and is replaced whole.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=nsl,categories=muster
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.clusterName`,description="The member cluster the nodes belong to"
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.nodeCount`,description="Nodes in this slice"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="!has(self.nodes) || self.nodes.all(n, !has(n.shape) || (has(self.shapes) && n.shape < size(self.shapes)))",message="a node's shape must be the index of one of the slice's shapes",fieldPath=".nodes"
// +kubebuilder:printcolumn:name="First Node",type=string,JSONPath=`.nodes[0].name`,priority=1,description="The first node of the slice, by name"
type NodeSlice struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// clusterName is the member cluster the nodes belong to.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=49
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterName is immutable"
	ClusterName string `json:"clusterName"`

	// nodeCount is the number of entries in nodes, for `kubectl get`.
	// +optional
	NodeCount int32 `json:"nodeCount"`

	// shapes the slice's nodes name (see NodeShape), at most one per node.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=500
	Shapes []NodeShape `json:"shapes,omitempty"`

	// nodes of this slice, sorted by name, at most 500. The agent replaces the list whole,
	// and the API server tracks it as one field; a name repeated in it counts once, as its
	// last entry describes the node.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=500
	Nodes []NodeInfo `json:"nodes,omitempty"`
}

// NodeSliceList is a list of NodeSlices.
//
// +kubebuilder:object:root=true
type NodeSliceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodeSlice `json:"items"`
}
