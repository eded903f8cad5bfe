package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// WorkloadSpread subset condition types.
const (
	// SubsetSchedulable is False with reason PodUnschedulable for the window in which an
	// Adaptive spread keeps pods off a subset whose pods could not be scheduled.
	SubsetSchedulable = "Schedulable"
)

// TargetReference names the workload a WorkloadSpread spreads.
type TargetReference struct {
	// apiVersion of the target: muster.dev/v1alpha1.
	// +kubebuilder:validation:Enum=muster.dev/v1alpha1
	APIVersion string `json:"apiVersion"`
	// kind of the target: FleetJob.
	// +kubebuilder:validation:Enum=FleetJob
	Kind string `json:"kind"`
	// name of the target in the WorkloadSpread's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// WorkloadSpreadSubset is one domain the target's pods may run in, in order of preference.
type WorkloadSpreadSubset struct {
	// name of the subset, unique within the WorkloadSpread.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// clusterSelector and clusterNames choose the subset's member clusters.
	ClusterAffinity `json:",inline"`

	// requiredNodeSelectorTerm restricts the subset's pods to matching nodes.
	// +optional
	RequiredNodeSelectorTerm *corev1.NodeSelectorTerm `json:"requiredNodeSelectorTerm,omitempty"`

	// preferredNodeSelectorTerms are added to the pods' preferred node affinity.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.weight >= 1 && t.weight <= 100)",message="weight must be in the range 1-100"
	PreferredNodeSelectorTerms []corev1.PreferredSchedulingTerm `json:"preferredNodeSelectorTerms,omitempty"`

	// tolerations are added to the subset's pods.
	// +optional
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// patch is a strategic merge patch applied to the pod template of the subset's pods,
	// e.g. to add labels or change resources.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Patch *runtime.RawExtension `json:"patch,omitempty"`

	// maxReplicas caps the subset: a number, or an integer percent of the target's
	// replicas. Unset means unbounded.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern=`^(100|[1-9]?[0-9])%$`
	// +kubebuilder:validation:XValidation:rule="type(self) != int || self >= 0",message="maxReplicas must not be negative"
	MaxReplicas *intstr.IntOrString `json:"maxReplicas,omitempty"`
}

// ScheduleStrategyType says whether pods move between subsets.
// +kubebuilder:validation:Enum=Fixed;Adaptive
type ScheduleStrategyType string

const (
	// ScheduleFixed keeps pods in the subset they were assigned to.
	ScheduleFixed ScheduleStrategyType = "Fixed"
	// ScheduleAdaptive moves pods that stay unschedulable to the next subset with room.
	ScheduleAdaptive ScheduleStrategyType = "Adaptive"
)

// AdaptiveStrategy configures rescheduling.
type AdaptiveStrategy struct {
	// rescheduleCriticalSeconds is how long a pod may stay unschedulable before it moves to
	// the next subset. Default 30.
	// +optional
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	RescheduleCriticalSeconds *int32 `json:"rescheduleCriticalSeconds,omitempty"`
}

// ScheduleStrategy configures how pods are kept in subsets.
// +kubebuilder:validation:XValidation:rule="self.type == 'Adaptive' || !has(self.adaptive)",message="adaptive is only allowed with type Adaptive"
type ScheduleStrategy struct {
	// type is Fixed (default) or Adaptive.
	// +kubebuilder:default=Fixed
	// +optional
	Type ScheduleStrategyType `json:"type,omitempty"`
	// adaptive configures type Adaptive.
	// +optional
	Adaptive *AdaptiveStrategy `json:"adaptive,omitempty"`
}

// WorkloadSpreadSpec spreads a FleetJob's pods over ordered subsets.
// +kubebuilder:validation:XValidation:rule="self.subsets.all(s, !has(s.maxReplicas) || type(s.maxReplicas) == int) || self.subsets.all(s, !has(s.maxReplicas) || type(s.maxReplicas) == string)",message="maxReplicas must be integers in every subset or percents in every subset, not a mix"
// +kubebuilder:validation:XValidation:rule="self.scheduleStrategy.type != 'Adaptive' || !has(self.subsets[size(self.subsets) - 1].maxReplicas)",message="with scheduleStrategy Adaptive the last subset must have no maxReplicas, so rescheduled pods always have somewhere to go"
type WorkloadSpreadSpec struct {
	// targetRef names the FleetJob to spread. It is immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="targetRef is immutable"
	TargetReference TargetReference `json:"targetRef"`

	// subsets in order of preference, at most 16 (the bound keeps the CEL rules on
	// maxReplicas within the API server's cost budget).
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Subsets []WorkloadSpreadSubset `json:"subsets"`

	// scheduleStrategy is Fixed (default) or Adaptive.
	// +optional
	// +kubebuilder:default={type: Fixed}
	ScheduleStrategy ScheduleStrategy `json:"scheduleStrategy,omitempty"`
}

// SubsetClusterStatus is one cluster's part of a subset.
type SubsetClusterStatus struct {
	// clusterName of the shard.
	ClusterName string `json:"clusterName"`
	// replicas assigned to the shard.
	Replicas int32 `json:"replicas"`
}

// WorkloadSpreadSubsetStatus reports one subset.
type WorkloadSpreadSubsetStatus struct {
	// name of the subset.
	Name string `json:"name"`
	// replicas currently assigned to the subset.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// missingReplicas is how many more the subset could take before reaching maxReplicas;
	// -1 when unbounded.
	// +optional
	MissingReplicas int32 `json:"missingReplicas,omitempty"`
	// conditions: Schedulable.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// clusters divides the subset's replicas among its clusters.
	// +optional
	// +listType=map
	// +listMapKey=clusterName
	Clusters []SubsetClusterStatus `json:"clusters,omitempty"`
}

// WorkloadSpreadStatus reports the spread.
type WorkloadSpreadStatus struct {
	// observedGeneration is the generation last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// subsets reports each subset, in spec order.
	// +optional
	// +listType=map
	// +listMapKey=name
	Subsets []WorkloadSpreadSubsetStatus `json:"subsets,omitempty"`
}

// WorkloadSpread spreads a FleetJob's pods over ordered subsets of clusters and node pools,
// capping each subset and, when Adaptive, moving pods that cannot be scheduled.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=wrs,categories=muster
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.targetRef.name`
// +kubebuilder:printcolumn:name="Strategy",type=string,JSONPath=`.spec.scheduleStrategy.type`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type WorkloadSpread struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec WorkloadSpreadSpec `json:"spec"`
	// +optional
	Status WorkloadSpreadStatus `json:"status,omitempty"`
}

// WorkloadSpreadList is a list of WorkloadSpreads.
//
// +kubebuilder:object:root=true
type WorkloadSpreadList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WorkloadSpread `json:"items"`
}
