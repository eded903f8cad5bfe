package v1alpha1

import (
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
	// clusterName of a selected cluster (a MemberCluster name, at most 49 characters).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=49
	ClusterName string `json:"clusterName"`
	// weight of the cluster relative to the other listed clusters, from 1 to 1000: with
	// weights 1 and 3, the second cluster gets three quarters of parallelism and
	// completions.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Weight int32 `json:"weight"`
}

// Division says how a Divided job is split. Without weights, clusters get shares in
// proportion to their free capacity for the pod template.
type Division struct {
	// weights give each listed cluster a static share, at most 256 entries. Selected
	// clusters that are not listed get nothing; listed clusters that the placement does not
	// select get nothing either. Unset divides by free capacity.
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

	// mode is how the job is laid onto the selected clusters: Single (default) runs the
	// whole Job on the one cluster that fits it best; Duplicate runs the whole Job on every
	// selected cluster; Divided splits parallelism and completions among the selected
	// clusters (Indexed jobs get contiguous index ranges). Immutable.
	// +kubebuilder:default=Single
	// +optional
	Mode PlacementMode `json:"mode,omitempty"`

	// division says how mode Divided splits the job; only allowed with mode Divided.
	// Unset splits in proportion to each cluster's free capacity for the pod template.
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
	// template of the batch/v1 Job that each shard runs in its member cluster, with the
	// Job's own fields and defaults. Parallelism and completions are fleet-wide: in mode
	// Divided the hub splits them among the clusters, in Single and Duplicate each cluster
	// runs them whole. restartPolicy must be Never or OnFailure and managedBy, if set,
	// muster.dev/agent.
	Template batchv1.JobTemplateSpec `json:"template"`

	// placement chooses the member clusters and how the job is laid onto them. Defaults
	// to mode Single on any accepted, available cluster.
	// +optional
	// +kubebuilder:default={mode: Single}
	Placement FleetJobPlacement `json:"placement,omitempty"`

	// shardFailurePolicy says what a failed shard (its Job reached backoffLimit or its
	// deadline) does to the others: FailFast (default) fails the FleetJob at once and stops
	// the other shards; Continue lets them run to their end and fails the FleetJob after.
	// +kubebuilder:default=FailFast
	// +optional
	ShardFailurePolicy ShardFailurePolicy `json:"shardFailurePolicy,omitempty"`
}

// IndexRange is a contiguous range of completion indexes, [start, end).
type IndexRange struct {
	// start is the first completion index of the range.
	Start int32 `json:"start"`
	// end is one past the last completion index of the range.
	End int32 `json:"end"`
}

// ClusterJobStatus is one shard of a FleetJob.
type ClusterJobStatus struct {
	// clusterName is the member cluster that runs the shard.
	ClusterName string `json:"clusterName"`
	// subset is the WorkloadSpread subset the shard belongs to; empty without a spread.
	// +optional
	Subset string `json:"subset,omitempty"`
	// parallelism is the shard Job's parallelism: the template's, or its share of it in
	// mode Divided.
	// +optional
	Parallelism *int32 `json:"parallelism,omitempty"`
	// completions is the shard Job's completions: the template's, or its share of it in
	// mode Divided; unset for a work queue.
	// +optional
	Completions *int32 `json:"completions,omitempty"`
	// indexes is the range of fleet-wide completion indexes an Indexed shard runs; its pods
	// see them in JOB_COMPLETION_INDEX.
	// +optional
	Indexes *IndexRange `json:"indexes,omitempty"`
	// part is set on the shard that runs, in mode Divided, the unfinished part of a shard
	// evicted from another cluster: a name for the part, beside the cluster's own shard.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Part string `json:"part,omitempty"`
	// carried is how many pods of the evicted shard a part took over from (and of those
	// that shard had replaced) succeeded: counted once in the job's totals, with this part.
	// +optional
	Carried int32 `json:"carried,omitempty"`
	// active is the number of pending or running pods of the shard's Job.
	// +optional
	Active int32 `json:"active,omitempty"`
	// ready is the number of active pods of the shard's Job that are Ready.
	// +optional
	Ready int32 `json:"ready,omitempty"`
	// succeeded is the number of pods of the shard's Job that succeeded.
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`
	// failed is the number of pods of the shard's Job that failed.
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// completedIndexes of an Indexed shard, as fleet-wide indexes in the Job's interval
	// format, e.g. "0-3,7".
	// +optional
	CompletedIndexes string `json:"completedIndexes,omitempty"`
	// phase of the shard's Job: Pending, Running, Suspended, Complete or Failed; Evicted
	// once the hub withdrew the shard from its cluster (see eviction), when its counts no
	// longer add to the job's.
	// +optional
	Phase JobPhase `json:"phase,omitempty"`
	// eviction says when and why the hub withdrew the shard from its cluster; set with
	// phase Evicted.
	// +optional
	Eviction *ShardEviction `json:"eviction,omitempty"`
}

// ShardEviction is why and when the hub withdrew a shard from its member cluster.
type ShardEviction struct {
	// time is when the hub withdrew the shard.
	Time metav1.Time `json:"time"`
	// reason is a CamelCase reason, e.g. ShardEvicted.
	// +kubebuilder:validation:MaxLength=64
	Reason string `json:"reason"`
	// message says why, for people.
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message"`
	// workUID is the Work that carried the shard. The hub records the eviction before it
	// deletes that Work (as the Job controller records a pod in uncountedTerminatedPods
	// before it removes the pod's finalizer), so an eviction is never lost or made twice.
	// +optional
	WorkUID types.UID `json:"workUID,omitempty"`
}

// JobPhase summarises a job's conditions for people scanning a list.
// +kubebuilder:validation:Enum=Pending;Running;Suspended;Complete;Failed;Evicted
type JobPhase string

const (
	// JobPending: no pod runs yet (not placed, or waiting for its Job to be created).
	JobPending JobPhase = "Pending"
	// JobRunning: pods run.
	JobRunning JobPhase = "Running"
	// JobSuspended: the Job is suspended (shard stopped by FailFast, or spec.suspend).
	JobSuspended JobPhase = "Suspended"
	// JobComplete: the Complete condition is True.
	JobComplete JobPhase = "Complete"
	// JobFailed: the Failed condition is True.
	JobFailed JobPhase = "Failed"
	// JobEvicted: a shard the hub withdrew from its cluster (a shard's phase only).
	JobEvicted JobPhase = "Evicted"
)

// FleetJobStatus aggregates the shards.
type FleetJobStatus struct {
	// observedGeneration is the metadata.generation the hub last acted on; status that
	// lags it does not reflect the latest spec yet.
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
	// phase summarises the conditions for people scanning a list: Pending, Running,
	// Suspended, Complete or Failed.
	// +optional
	Phase JobPhase `json:"phase,omitempty"`
	// startTime is when the first shard was placed.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// completionTime is when the job became Complete or Failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// active is the number of pods of the shards' Jobs that are pending or running, summed
	// over every shard. Always written, so that `kubectl get` shows 0 rather than nothing.
	// +optional
	Active int32 `json:"active"`
	// ready is the number of active pods whose Ready condition is True, summed over every
	// shard.
	// +optional
	Ready int32 `json:"ready"`
	// succeeded is the number of pods that completed successfully, summed over every shard.
	// The job is Complete once every shard's Job reached its completions.
	// +optional
	Succeeded int32 `json:"succeeded"`
	// failed is the number of pods that failed, summed over every shard; each shard's Job
	// retries up to its own backoffLimit.
	// +optional
	Failed int32 `json:"failed"`
	// progress is "<succeeded>/<completions>" over the whole fleet, as the COMPLETIONS
	// column of `kubectl get jobs` shows it: completions is the sum of the shards'
	// completions (1 for a shard without completions), so a Duplicate job on 3 clusters
	// with completions 2 reads 0/6 at its start.
	// +optional
	Progress string `json:"progress,omitempty"`
	// clusterCount is the number of distinct member clusters the job has shards in.
	// +optional
	ClusterCount int32 `json:"clusterCount"`
	// clusters has one entry per shard, with its cluster, share and pod counts: one per
	// cluster, or with a WorkloadSpread one per (subset, cluster), in that order; then the
	// shards the hub evicted (phase Evicted), the latest few. Past MaxClusterStatuses
	// shards, only that many are listed (failed shards first, then unfinished ones) and
	// clustersOmitted counts the others: each shard's own status is on its Work.
	// +optional
	// +listType=atomic
	Clusters []ClusterJobStatus `json:"clusters,omitempty"`
	// clustersOmitted is how many shards clusters leaves out, to keep the job's size
	// bounded whatever the number of member clusters; their counts are in the totals.
	// +optional
	ClustersOmitted int32 `json:"clustersOmitted,omitempty"`
	// placement is the hub's record of the placements it decided for a job without a
	// WorkloadSpread, written before the Works that carry them: a round that finds fewer
	// shards than the record accounts for (a Work create refused or cut short by a
	// restart, a member removed with its shards) places the rest instead of finishing
	// the job without it.
	// +optional
	Placement *FleetJobPlacementRecord `json:"placement,omitempty"`
}

// FleetJobPlacementRecord is what a FleetJob's placements promised, in a size that does
// not grow with the number of clusters: each shard's own share is on its Work, and what
// the shards in force and the evicted ones carried do not account for is the rest to
// place again.
type FleetJobPlacementRecord struct {
	// decisions counts the placements recorded: the first, then one for each rest placed
	// again. The Works of a rest are named by its number, so that a rest placed after a
	// failure never takes the name of a Work an earlier one wrote.
	// +kubebuilder:validation:Minimum=0
	Decisions int32 `json:"decisions"`
	// copies is, for a Duplicate job, how many copies its placement keeps: one per
	// cluster it chose, less those evicted (an evicted copy is dropped, not moved).
	// +optional
	// +kubebuilder:validation:Minimum=0
	Copies int32 `json:"copies,omitempty"`
	// lastDecisionTime is when the latest decision was recorded.
	// +optional
	LastDecisionTime *metav1.Time `json:"lastDecisionTime,omitempty"`
}

// MaxClusterStatuses is how many shards the status of a FleetJob or BroadcastJob lists
// at most, besides its latest evicted ones: about 15 KB of status whatever the number of
// member clusters, far under the API server's limit on an object's size.
const MaxClusterStatuses = 100

// FleetJob is a batch Job run on one, every, or a division of the member clusters. The
// hub places it, sends each cluster's shard as a Work, and sums the shards' progress in
// its status.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=fj,categories=muster
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.placement.mode`,description="How the job is laid onto the clusters: Single, Duplicate or Divided"
// +kubebuilder:printcolumn:name="Completions",type=string,JSONPath=`.status.progress`,description="Succeeded pods of the completions wanted, fleet-wide"
// +kubebuilder:printcolumn:name="Active",type=integer,JSONPath=`.status.active`,description="Pending or running pods, fleet-wide"
// +kubebuilder:printcolumn:name="Succeeded",type=integer,JSONPath=`.status.succeeded`,description="Pods that succeeded, fleet-wide"
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.failed`,description="Pods that failed, fleet-wide"
// +kubebuilder:printcolumn:name="Clusters",type=integer,JSONPath=`.status.clusterCount`,description="Member clusters the job has shards in"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.ready`,priority=1,description="Active pods that are Ready, fleet-wide"
// +kubebuilder:printcolumn:name="Shard Failure",type=string,JSONPath=`.spec.shardFailurePolicy`,priority=1,description="What a failed shard does to the others: FailFast or Continue"
// +kubebuilder:printcolumn:name="Started",type=date,JSONPath=`.status.startTime`,priority=1,description="When the first shard was placed"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63",message="FleetJob name must be at most 63 characters: it becomes the shard Jobs' name and a label value on their pods"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.spec) || self.spec.placement.mode == oldSelf.spec.placement.mode",message="spec.placement.mode is immutable"
type FleetJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the Job to run and where to run it.
	Spec FleetJobSpec `json:"spec"`
	// status is the hub's view of the job's shards, written by the hub.
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
