package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MemberCluster condition types.
const (
	// MemberClusterAccepted is True once a hub administrator (or the auto-accept policy)
	// accepted the cluster; only then are its certificate requests approved.
	MemberClusterAccepted = "Accepted"
	// MemberClusterJoined is True once the agent holds a hub-signed client certificate.
	MemberClusterJoined = "Joined"
	// MemberClusterAvailable is True while the agent renews its Lease, Unknown when it
	// stopped renewing for longer than the hub's grace period.
	MemberClusterAvailable = "Available"
	// MemberClusterInventoryComplete is False while the member reports more nodes than the
	// hub keeps for one member (--max-nodes-per-member): placement sees only those its
	// NodeSlices hold.
	MemberClusterInventoryComplete = "InventoryComplete"
	// MemberClusterAgentVersionSupported is True while the agent's Muster version is within
	// the hub's version skew policy (api/versionskew: the hub's minor version or one
	// behind), False outside it, and Unknown when either side runs a build the policy
	// cannot judge or the agent has not reported its version.
	MemberClusterAgentVersionSupported = "AgentVersionSupported"
)

// MemberClusterSpec is what the hub administrator decides about a member.
type MemberClusterSpec struct {
	// accepted admits the cluster into the fleet: only then does the hub approve its
	// agent's certificate requests and place work on it. Set by `musterctl accept` (or the
	// hub's auto-accept policy); default false.
	// +kubebuilder:default=false
	// +optional
	Accepted bool `json:"accepted,omitempty"`

	// taints keep new work off the cluster unless the work's placement tolerates them
	// (effects NoSchedule and NoExecute; PreferNoSchedule is ignored), at most 32. The hub adds
	// muster.dev/unreachable:NoSchedule while the agent is unreachable; being a map keyed by
	// key and effect, administrators' own taints and the hub's coexist under server-side
	// apply.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])",message="taint effect must be NoSchedule, PreferNoSchedule or NoExecute"
	// +kubebuilder:validation:XValidation:rule="self.all(t, size(t.key) > 0)",message="taint key must not be empty"
	Taints []corev1.Taint `json:"taints,omitempty"`
}

// NodeCounts summarises a member's nodes.
type NodeCounts struct {
	// total is the number of the member's nodes.
	Total int32 `json:"total"`
	// ready is the number of nodes whose Ready condition is True.
	Ready int32 `json:"ready"`
	// schedulable is the number of ready nodes that are not cordoned.
	Schedulable int32 `json:"schedulable"`
}

// MemberClusterStatus is what the agent and the hub observe about a member.
type MemberClusterStatus struct {
	// conditions: Accepted (an administrator admitted the cluster), Joined (the agent holds
	// a hub-signed certificate) and Available (the agent renews its Lease; Unknown once it
	// stopped for longer than the hub's grace period).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// version is the member's Kubernetes version, e.g. v1.36.3.
	// +optional
	Version string `json:"version,omitempty"`

	// agentVersion is the Muster version of the cluster's agent, as it last reported it.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	AgentVersion string `json:"agentVersion,omitempty"`

	// nodes counts the member's nodes, as its agent last reported them.
	// +optional
	Nodes *NodeCounts `json:"nodes,omitempty"`

	// allocatable is the sum of the allocatable resources of the member's ready nodes. It
	// is not free capacity: placement computes that from the NodeSlices.
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`

	// lastInventoryReportTime is when the agent last reported the member's nodes (its
	// NodeSlices and this status). The agent refreshes it at least every five minutes
	// while it runs, even when no node changed, so its age says how old the hub's view of
	// the member's nodes may be.
	// +optional
	LastInventoryReportTime *metav1.Time `json:"lastInventoryReportTime,omitempty"`
}

// MemberCluster is a Kubernetes cluster joined to the hub. Its name is the cluster name
// used everywhere else (labels, the muster-member-<name> namespace, placement).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=mc;mcs,categories=muster
// +kubebuilder:printcolumn:name="Accepted",type=boolean,JSONPath=`.spec.accepted`
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`,description="Whether the agent renews its Lease"
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.nodes.ready`,description="Ready nodes"
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.nodes.total`,description="All nodes"
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version`,description="The member's Kubernetes version"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Joined",type=string,JSONPath=`.status.conditions[?(@.type=="Joined")].status`,priority=1,description="Whether the agent holds a hub-signed certificate"
// +kubebuilder:printcolumn:name="Schedulable",type=integer,JSONPath=`.status.nodes.schedulable`,priority=1,description="Ready nodes that are not cordoned"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].reason`,priority=1,description="Why the cluster is or is not available"
// +kubebuilder:printcolumn:name="Agent",type=string,JSONPath=`.status.agentVersion`,priority=1,description="The Muster version of the cluster's agent"
// +kubebuilder:printcolumn:name="Agent-Supported",type=string,JSONPath=`.status.conditions[?(@.type=="AgentVersionSupported")].status`,priority=1,description="Whether the agent's version is within the hub's skew policy"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 49 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="cluster name must be a DNS label of at most 49 characters, so that its hub namespace muster-member-<name> is a valid name"
type MemberCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what the hub administrator decides about the cluster.
	// +optional
	Spec MemberClusterSpec `json:"spec,omitempty"`
	// status is what the agent and the hub observe about the cluster.
	// +optional
	Status MemberClusterStatus `json:"status,omitempty"`
}

// MemberClusterList is a list of MemberClusters.
//
// +kubebuilder:object:root=true
type MemberClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MemberCluster `json:"items"`
}
