package v1alpha1

import (
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FleetJob condition types.
const (
	// FleetJobScheduled is True once every shard has a cluster; False with a reason when no
	// selected cluster can take the job, or with reason ShardNameTaken when another
	// object's Work holds the name of a shard's Work.
	FleetJobScheduled = "Scheduled"
	// FleetJobComplete is True when the job finished successfully fleet-wide.
	FleetJobComplete = "Complete"
	// FleetJobFailed is True when the job failed fleet-wide.
	FleetJobFailed = "Failed"
	// FleetJobShardsApplied is False with reason ApplyFailed and the member API server's
	// message when a cluster refused its shard's Job, Unknown until every agent reported,
	// and True once every shard's Job exists.
	FleetJobShardsApplied = "ShardsApplied"
	// FleetJobPodsSchedulable is False with reason Unschedulable and the scheduler's
	// message while some shard's pods wait for a node, True once none does; absent while
	// no pod ever waited.
	FleetJobPodsSchedulable = "PodsSchedulable"
)

// PlacementMode says how a FleetJob is laid onto the selected clusters.
// +kubebuilder:validation:Enum=Single;Duplicate;Divided
type PlacementMode string

const (
	// PlacementSingle runs the whole Job on the one selected cluster that fits it best.
	PlacementSingle PlacementMode = "Single"
	// PlacementDuplicate runs the whole Job on every selected cluster.
	PlacementDuplicate PlacementMode = "Duplicate"
	// PlacementDivided splits parallelism and completions among the selected clusters.
	PlacementDivided PlacementMode = "Divided"
)

// ClusterWeight gives one cluster its share of a divided job.
type ClusterWeight struct {
	// clusterName of a selected cluster.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=49
	ClusterName string `json:"clusterName"`
	// weight relative to the other listed clusters.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Weight int32 `json:"weight"`
}

// Division says how a Divided job is split. Without weights, clusters get shares in
// proportion to their free capacity for the pod template.
type Division struct {
	// weights give each listed cluster a static share; selected clusters that are not
	// listed get nothing.
	// +optional
	// +listType=map
	// +listMapKey=clusterName
	// +kubebuilder:validation:MaxItems=256
	Weights []ClusterWeight `json:"weights,omitempty"`
}

// FleetJobPlacement chooses clusters and how the job is laid onto them.
// +kubebuilder:validation:XValidation:rule="!has(self.division) || self.mode == 'Divided'",message="division is only allowed with mode Divided"
type FleetJobPlacement struct {
	Placement `json:",inline"`

	// mode is Single (default), Duplicate or Divided.
	// +kubebuilder:default=Single
	// +optional
	Mode PlacementMode `json:"mode,omitempty"`

	// division configures mode Divided.
	// +optional
	Division *Division `json:"division,omitempty"`
}

// ShardFailurePolicy says what a failed shard does to the rest of a FleetJob.
// +kubebuilder:validation:Enum=FailFast;Continue
type ShardFailurePolicy string

const (
	// ShardFailFast fails the FleetJob and stops every other shard when one shard fails.
	ShardFailFast ShardFailurePolicy = "FailFast"
	// ShardContinue lets the other shards run to their end; the FleetJob fails afterwards.
	ShardContinue ShardFailurePolicy = "Continue"
)

// FleetJobSpec is a batch Job and where to run it.
// The rules below the first two read inside the Job and pod specs, so they hold
// vacuously when a spec is missing: a missing spec gets one Required error, not one
// "no such key" per rule.
// +kubebuilder:validation:XValidation:rule="has(self.template.spec)",fieldPath=".template.spec",reason=FieldValueRequired,message="the Job that each shard runs"
// +kubebuilder:validation:XValidation:rule="!has(self.template.spec) || has(self.template.spec.template.spec)",fieldPath=".template.spec.template.spec",reason=FieldValueRequired,message="the pods of the Job that each shard runs"
// +kubebuilder:validation:XValidation:rule="!has(self.template.spec) || !has(self.template.spec.managedBy) || self.template.spec.managedBy == 'muster.dev/agent'",message="template.spec.managedBy must be empty or muster.dev/agent: shards always run under the agent's Job controller"
// +kubebuilder:validation:XValidation:rule="!has(self.template.spec) || !has(self.template.spec.template.spec) || (has(self.template.spec.template.spec.restartPolicy) && self.template.spec.template.spec.restartPolicy in ['Never', 'OnFailure'])",message="template.spec.template.spec.restartPolicy must be Never or OnFailure"
// +kubebuilder:validation:XValidation:rule="!has(self.template.spec) || !has(self.template.spec.completionMode) || self.template.spec.completionMode != 'Indexed' || has(self.template.spec.completions)",message="an Indexed job needs template.spec.completions"
type FleetJobSpec struct {
	// template of the batch/v1 Job that each shard runs. Parallelism and completions are
	// fleet-wide; the hub divides them in mode Divided.
	Template batchv1.JobTemplateSpec `json:"template"`

	// placement chooses the clusters.
	// +optional
	// +kubebuilder:default={mode: Single}
	Placement FleetJobPlacement `json:"placement,omitempty"`

	// shardFailurePolicy is FailFast (default) or Continue.
	// +kubebuilder:default=FailFast
	// +optional
	ShardFailurePolicy ShardFailurePolicy `json:"shardFailurePolicy,omitempty"`
}

// IndexRange is a contiguous range of completion indexes, [start, end).
type IndexRange struct {
	Start int32 `json:"start"`
	End   int32 `json:"end"`
}

// ClusterJobStatus is one shard of a FleetJob.
type ClusterJobStatus struct {
	// clusterName runs the shard.
	ClusterName string `json:"clusterName"`
	// subset is the WorkloadSpread subset the shard belongs to; empty without a spread.
	// +optional
	Subset string `json:"subset,omitempty"`
	// parallelism assigned to the shard.
	// +optional
	Parallelism *int32 `json:"parallelism,omitempty"`
	// completions assigned to the shard.
	// +optional
	Completions *int32 `json:"completions,omitempty"`
	// indexes is the global completion index range of an Indexed shard.
	// +optional
	Indexes *IndexRange `json:"indexes,omitempty"`
	// active, ready, succeeded and failed pods of the shard's Job.
	// +optional
	Active int32 `json:"active,omitempty"`
	// +optional
	Ready int32 `json:"ready,omitempty"`
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// completedIndexes of an Indexed shard, as global indexes in the Job's interval format.
	// +optional
	CompletedIndexes string `json:"completedIndexes,omitempty"`
	// phase of the shard.
	// +optional
	Phase JobPhase `json:"phase,omitempty"`
}

// JobPhase summarises a job's conditions for people scanning a list.
// +kubebuilder:validation:Enum=Pending;Running;Suspended;Complete;Failed
type JobPhase string

const (
	JobPending   JobPhase = "Pending"
	JobRunning   JobPhase = "Running"
	JobSuspended JobPhase = "Suspended"
	JobComplete  JobPhase = "Complete"
	JobFailed    JobPhase = "Failed"
)

// FleetJobStatus aggregates the shards.
type FleetJobStatus struct {
	// observedGeneration is the generation the hub last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions: Scheduled (False with a reason while the job has no place to run, such
	// as ShardNameTaken), Complete, Failed, ShardsApplied (False with reason ApplyFailed
	// and the member's message when a cluster refused its shard's Job) and PodsSchedulable
	// (False with reason Unschedulable while some shard's pods wait for a node; absent
	// while none ever waited).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// phase summarises the conditions.
	// +optional
	Phase JobPhase `json:"phase,omitempty"`
	// startTime is when the first shard was placed.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// completionTime is when the job completed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// active, ready, succeeded and failed pods summed over every shard.
	// +optional
	Active int32 `json:"active,omitempty"`
	// +optional
	Ready int32 `json:"ready,omitempty"`
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// clusters has one entry per shard: one per cluster, or with a WorkloadSpread one per
	// (subset, cluster), in that order.
	// +optional
	// +listType=atomic
	Clusters []ClusterJobStatus `json:"clusters,omitempty"`
}

// FleetJob is a batch Job run on one, every, or a division of the member clusters.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=fj,categories=muster
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.placement.mode`
// +kubebuilder:printcolumn:name="Succeeded",type=integer,JSONPath=`.status.succeeded`
// +kubebuilder:printcolumn:name="Completions",type=integer,JSONPath=`.spec.template.spec.completions`
// +kubebuilder:printcolumn:name="Active",type=integer,JSONPath=`.status.active`
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.failed`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63",message="FleetJob name must be at most 63 characters: it becomes the shard Jobs' name and a label value on their pods"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.spec) || self.spec.placement.mode == oldSelf.spec.placement.mode",message="spec.placement.mode is immutable"
type FleetJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec FleetJobSpec `json:"spec"`
	// +optional
	Status FleetJobStatus `json:"status,omitempty"`
}

// FleetJobList is a list of FleetJobs.
//
// +kubebuilder:object:root=true
type FleetJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FleetJob `json:"items"`
}
