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
	// name of the subset, unique within the WorkloadSpread: a DNS label of at most 63
	// characters. Shards carry it in the muster.dev/subset label.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// clusterSelector and clusterNames choose the subset's member clusters.
	ClusterAffinity `json:",inline"`

	// requiredNodeSelectorTerm restricts the subset's pods to matching nodes: it is added to
	// each of the pods' required node affinity terms, so a pod must match both.
	// +optional
	RequiredNodeSelectorTerm *corev1.NodeSelectorTerm `json:"requiredNodeSelectorTerm,omitempty"`

	// preferredNodeSelectorTerms are added to the subset's pods' preferred node affinity,
	// each with a weight from 1 to 100; at most 32.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.weight >= 1 && t.weight <= 100)",message="weight must be in the range 1-100"
	PreferredNodeSelectorTerms []corev1.PreferredSchedulingTerm `json:"preferredNodeSelectorTerms,omitempty"`

	// tolerations are added to the subset's pods' tolerations, e.g. to let them onto
	// tainted spot or GPU nodes; at most 32, as a placement's.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// patch is a strategic merge patch applied to the pod template of the subset's pods,
	// e.g. {"metadata":{"labels":{"tier":"spot"}}} or a container's resources. The patched
	// template gets the subset's node terms and tolerations added after the patch.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Patch *runtime.RawExtension `json:"patch,omitempty"`

	// maxReplicas caps the pods the subset takes: a non-negative number, or an integer
	// percent (0% to 100%) of the target's parallelism; all subsets use numbers or all
	// percents. Pods beyond the cap go to the next subset; those no cap admits go to the
	// last subset, past its cap (every replica runs in a subset). Unset means unbounded:
	// the subsets after an unbounded one get replicas only while it has no cluster that
	// takes new ones or, with Adaptive, while it is skipped. With Adaptive the last subset
	// must be unbounded.
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
	// rescheduleCriticalSeconds is how long a subset's pods may stay unschedulable before
	// the subset is skipped and its pods move to the next subset with room. Default 30; 0
	// turns rescheduling off (the spread then acts as Fixed), as in OpenKruise. With
	// several subsets at most 295 / (subsets - 1), so that a pod passes every earlier
	// subset before the first one's 5-minute skip ends and it could be sent back there.
	// +optional
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=0
	RescheduleCriticalSeconds *int32 `json:"rescheduleCriticalSeconds,omitempty"`
}

// ScheduleStrategy configures how pods are kept in subsets.
// +kubebuilder:validation:XValidation:rule="self.type == 'Adaptive' || !has(self.adaptive)",message="adaptive is only allowed with type Adaptive"
type ScheduleStrategy struct {
	// type is Fixed (default), which keeps pods in the subset they were assigned to, or
	// Adaptive, which moves pods that stay unschedulable to the next subset with room.
	// +kubebuilder:default=Fixed
	// +optional
	Type ScheduleStrategyType `json:"type,omitempty"`
	// adaptive configures type Adaptive; only allowed with it.
	// +optional
	Adaptive *AdaptiveStrategy `json:"adaptive,omitempty"`
}

// WorkloadSpreadSpec spreads a FleetJob's pods over ordered subsets.
// +kubebuilder:validation:XValidation:rule="self.subsets.all(s, !has(s.maxReplicas) || type(s.maxReplicas) == int) || self.subsets.all(s, !has(s.maxReplicas) || type(s.maxReplicas) == string)",message="maxReplicas must be integers in every subset or percents in every subset, not a mix"
// +kubebuilder:validation:XValidation:rule="self.scheduleStrategy.type != 'Adaptive' || !has(self.subsets[size(self.subsets) - 1].maxReplicas)",message="with scheduleStrategy Adaptive the last subset must have no maxReplicas, so rescheduled pods always have somewhere to go"
// +kubebuilder:validation:XValidation:rule="size(self.subsets) < 2 || !has(self.scheduleStrategy.adaptive) || !has(self.scheduleStrategy.adaptive.rescheduleCriticalSeconds) || self.scheduleStrategy.adaptive.rescheduleCriticalSeconds <= 295 / (size(self.subsets) - 1)",fieldPath=".scheduleStrategy.adaptive.rescheduleCriticalSeconds",message="with several subsets rescheduleCriticalSeconds must be at most 295 / (subsets - 1) (295 with 2 subsets, 147 with 3), so that a pod passes every earlier subset within the 5 minutes the first one is skipped"
type WorkloadSpreadSpec struct {
	// targetRef names the FleetJob to spread, in the WorkloadSpread's namespace. Immutable.
	// The FleetJob is placed by the subsets instead of its own placement mode.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="targetRef is immutable"
	TargetReference TargetReference `json:"targetRef"`

	// subsets in order of preference, at most 16 (the bound keeps the CEL rules on
	// maxReplicas within the API server's cost budget).
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Subsets []WorkloadSpreadSubset `json:"subsets"`

	// scheduleStrategy says whether pods stay in their subset (Fixed, default) or move on
	// when they cannot be scheduled (Adaptive).
	// +optional
	// +kubebuilder:default={type: Fixed}
	ScheduleStrategy ScheduleStrategy `json:"scheduleStrategy,omitempty"`
}

// SubsetClusterStatus is one cluster's part of a subset.
type SubsetClusterStatus struct {
	// clusterName of the shard.
	ClusterName string `json:"clusterName"`
	// replicas is the parallelism assigned to the shard in this cluster.
	Replicas int32 `json:"replicas"`
}

// WorkloadSpreadSubsetStatus reports one subset.
type WorkloadSpreadSubsetStatus struct {
	// name of the subset.
	Name string `json:"name"`
	// replicas is the parallelism currently assigned to the subset.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// missingReplicas is how many more the subset could take before reaching maxReplicas;
	// -1 when unbounded.
	// +optional
	MissingReplicas int32 `json:"missingReplicas,omitempty"`
	// conditions: Schedulable (False with reason PodUnschedulable while the subset's pods
	// wait for a node; with Adaptive, for the window in which the subset is skipped).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// clusters divides the subset's replicas among its clusters, in name order. Past
	// MaxSubsetClusterStatuses clusters it lists those with the most replicas, and
	// clustersOmitted counts the rest, whose replicas are still in replicas.
	// +optional
	// +listType=map
	// +listMapKey=clusterName
	// +kubebuilder:validation:MaxItems=20
	Clusters []SubsetClusterStatus `json:"clusters,omitempty"`
	// clustersOmitted counts the clusters running replicas of the subset that clusters
	// leaves out.
	// +optional
	ClustersOmitted int32 `json:"clustersOmitted,omitempty"`
}

// MaxSubsetClusterStatuses is how many clusters a WorkloadSpread subset's status lists at
// most: with 16 subsets, the status stays under about 25 KB whatever the fleet's size.
const MaxSubsetClusterStatuses = 20

// WorkloadSpreadStatus reports the spread.
type WorkloadSpreadStatus struct {
	// observedGeneration is the metadata.generation the hub last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// replicas is the parallelism assigned over every subset. Always written, so that
	// `kubectl get` shows 0 rather than nothing.
	// +optional
	Replicas int32 `json:"replicas"`
	// subsetReplicas is a one-line summary of the subsets in spec order for `kubectl get`:
	// each subset's replicas, and its cap when it has one, e.g. "gpu 4/4, cpu 2".
	// +optional
	SubsetReplicas string `json:"subsetReplicas,omitempty"`
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
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.targetRef.name`,description="The FleetJob spread"
// +kubebuilder:printcolumn:name="Strategy",type=string,JSONPath=`.spec.scheduleStrategy.type`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.status.replicas`,description="Parallelism assigned over every subset"
// +kubebuilder:printcolumn:name="Subsets",type=string,JSONPath=`.status.subsetReplicas`,description="Each subset's replicas, and its cap when it has one"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Target Kind",type=string,JSONPath=`.spec.targetRef.kind`,priority=1
// +kubebuilder:printcolumn:name="Reschedule After",type=integer,JSONPath=`.spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds`,priority=1,description="Seconds an Adaptive subset's pods may stay unschedulable"
type WorkloadSpread struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the FleetJob to spread and its ordered subsets.
	Spec WorkloadSpreadSpec `json:"spec"`
	// status is how the target's parallelism is laid over the subsets, written by the hub.
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
