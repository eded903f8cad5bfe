package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// BroadcastJob condition types.
const (
	// BroadcastJobComplete is True when every eligible node ran its pod to the end.
	BroadcastJobComplete = "Complete"
	// BroadcastJobFailed is True when the job failed (FailFast, deadline).
	BroadcastJobFailed = "Failed"
	// BroadcastJobPaused is True while the job creates no pods because it is paused.
	BroadcastJobPaused = "Paused"
	// BroadcastJobNodesEligible is False with reason NoEligibleNodes when no node fits
	// the pod template, so an idle job does not look like a running one; on the hub, with
	// reason NoEligibleClusters when no member cluster matches the placement, and
	// NoPlacement for a job without spec.placement, which no hub controller runs.
	BroadcastJobNodesEligible = "NodesEligible"
	// BroadcastJobShardsApplied, on the hub, is False with reason ApplyFailed and the
	// member API server's message when a cluster refused its shard, or with reason
	// ShardNameTaken when another object's Work holds the name of the shard's Work;
	// Unknown until every agent reported, and True once every shard exists.
	BroadcastJobShardsApplied = "ShardsApplied"
)

// CompletionPolicyType says when a BroadcastJob ends.
// +kubebuilder:validation:Enum=Always;Never
type CompletionPolicyType string

const (
	// CompletionAlways ends the job once every eligible node ran its pod to the end.
	CompletionAlways CompletionPolicyType = "Always"
	// CompletionNever keeps the job running so that new eligible nodes get pods.
	CompletionNever CompletionPolicyType = "Never"
)

// CompletionPolicy configures when and how a BroadcastJob ends.
// +kubebuilder:validation:XValidation:rule="self.type == 'Always' || (!has(self.activeDeadlineSeconds) && !has(self.ttlSecondsAfterFinished))",message="activeDeadlineSeconds and ttlSecondsAfterFinished are only allowed with completionPolicy type Always"
type CompletionPolicy struct {
	// type is when the job ends: Always (default) ends it once every eligible node ran its
	// pod to the end; Never keeps it running so that nodes that become eligible later get a
	// pod too.
	// +kubebuilder:default=Always
	// +optional
	Type CompletionPolicyType `json:"type,omitempty"`

	// activeDeadlineSeconds fails the job, and deletes its active pods, when it has run
	// this many seconds since startTime; 0 fails it at once, before any pod starts, as
	// OpenKruise does. Only with type Always. Unset means no deadline.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// ttlSecondsAfterFinished deletes the job, and its pods, this many seconds after it
	// became Completed or Failed; 0 deletes it at once. Only with type Always. Unset keeps
	// it.
	// +optional
	// +kubebuilder:validation:Minimum=0
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// FailurePolicyType says what a failed pod does to a BroadcastJob.
// +kubebuilder:validation:Enum=Continue;FailFast;Pause
type FailurePolicyType string

const (
	// FailureContinue keeps running the other nodes' pods; failures never fail the job, which
	// ends Complete once every node is done, as in OpenKruise.
	FailureContinue FailurePolicyType = "Continue"
	// FailureFailFast fails the job at the first failed pod and deletes active pods.
	FailureFailFast FailurePolicyType = "FailFast"
	// FailurePause pauses the job (spec.paused becomes true) at the first failed pod.
	FailurePause FailurePolicyType = "Pause"
)

// FailurePolicy configures failure handling.
type FailurePolicy struct {
	// type is what a failed pod does to the job: FailFast (default, as OpenKruise's webhook
	// sets it) fails the job at once and deletes its active pods; Continue runs the other
	// nodes' pods to their end and then completes (failures do not fail the job, as in
	// OpenKruise); Pause sets spec.paused, so no new pods
	// start until a user resumes the job. The controllers read an empty type as FailFast.
	// +kubebuilder:default=FailFast
	// +optional
	Type FailurePolicyType `json:"type,omitempty"`

	// restartLimit is how many container restarts (with restartPolicy OnFailure) a pod may
	// have before it counts as failed. 0 (default) means restarts never fail a pod.
	// +optional
	// +kubebuilder:validation:Minimum=0
	RestartLimit int32 `json:"restartLimit,omitempty"`
}

// BroadcastJobSpec runs one pod to completion on every eligible node.
// +kubebuilder:validation:XValidation:rule="has(self.template.spec)",fieldPath=".template.spec",reason=FieldValueRequired,message="the pod run on each node"
// +kubebuilder:validation:XValidation:rule="!has(self.template.spec) || (has(self.template.spec.restartPolicy) && self.template.spec.restartPolicy in ['Never', 'OnFailure'])",message="template.spec.restartPolicy must be Never or OnFailure"
//
// The labels and annotations the agent puts on every pod of the job are refused in the
// template rather than silently overwritten, as upstream refuses its own: the agent finds
// a job's pods by these labels, and a preset restart-limit-exceeded annotation would make
// every pod count as failed. Membership tests on the map keep the rules' cost constant.
// +kubebuilder:validation:XValidation:rule="!has(self.template.metadata) || !has(self.template.metadata.labels) || !['muster.dev/controller', 'muster.dev/broadcastjob-name', 'muster.dev/broadcastjob-uid'].exists(k, k in self.template.metadata.labels)",fieldPath=".template.metadata.labels",reason=FieldValueForbidden,message="muster.dev/controller, muster.dev/broadcastjob-name and muster.dev/broadcastjob-uid are set by Muster on the job's pods and must not be preset in the template"
// +kubebuilder:validation:XValidation:rule="!has(self.template.metadata) || !has(self.template.metadata.annotations) || !['muster.dev/node', 'muster.dev/restart-limit-exceeded'].exists(k, k in self.template.metadata.annotations)",fieldPath=".template.metadata.annotations",reason=FieldValueForbidden,message="muster.dev/node and muster.dev/restart-limit-exceeded are set by Muster on the job's pods and must not be preset in the template"
type BroadcastJobSpec struct {
	// parallelism caps the pods running at once: a non-negative number, or an integer
	// percent of the eligible nodes from 0% to 100% (rounded up). Unset means no cap; 0
	// starts no pods. On the hub it is fleet-wide: a percent is taken of the eligible nodes
	// of every selected cluster, and the hub divides the cap among the clusters' shards.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",message="parallelism must be a non-negative integer or an integer percent from 0% to 100%"
	Parallelism *intstr.IntOrString `json:"parallelism,omitempty"`

	// template of the pod run on each eligible node. A node is eligible when it is ready
	// and schedulable, the pod's nodeName, nodeSelector, required node affinity and
	// tolerations allow it, and the pod's requests fit its allocatable resources (not what
	// other pods use). restartPolicy must be Never or OnFailure; the labels
	// muster.dev/controller, muster.dev/broadcastjob-name and muster.dev/broadcastjob-uid and
	// the annotations muster.dev/node and muster.dev/restart-limit-exceeded are set by Muster
	// and must not be preset.
	Template corev1.PodTemplateSpec `json:"template"`

	// completionPolicy says when the job ends and how long it may run. Defaults to type
	// Always.
	// +optional
	// +kubebuilder:default={type: Always}
	CompletionPolicy CompletionPolicy `json:"completionPolicy,omitempty"`

	// paused stops creating and deleting pods: running pods go on, also on nodes that are
	// gone or no longer fit, until the job resumes. The job still fails at its deadline
	// and, with FailFast, at a failed pod. Default false; failurePolicy Pause sets it.
	// +kubebuilder:default=false
	// +optional
	Paused bool `json:"paused,omitempty"`

	// failurePolicy says what a failed pod does to the job. Defaults to type FailFast.
	// +optional
	// +kubebuilder:default={type: FailFast}
	FailurePolicy FailurePolicy `json:"failurePolicy,omitempty"`

	// placement chooses the member clusters whose nodes run the job. Set it on the hub,
	// where each selected cluster gets a shard; a BroadcastJob created in a member without
	// placement runs on that member's nodes, and a hub BroadcastJob without it runs nowhere
	// (condition NodesEligible says NoPlacement).
	// +optional
	Placement *Placement `json:"placement,omitempty"`
}

// BroadcastJobPhase summarises a BroadcastJob.
// +kubebuilder:validation:Enum=Pending;Running;Paused;Completed;Failed;Evicted
type BroadcastJobPhase string

const (
	// BroadcastJobPending: no node (or, on the hub, no cluster) is eligible yet, so
	// nothing runs; condition NodesEligible says why.
	BroadcastJobPending BroadcastJobPhase = "Pending"
	// BroadcastJobRunning: pods run or are still to start.
	BroadcastJobRunning BroadcastJobPhase = "Running"
	// BroadcastJobPausedPh: spec.paused is true.
	BroadcastJobPausedPh BroadcastJobPhase = "Paused"
	// BroadcastJobCompleted: the Complete condition is True.
	BroadcastJobCompleted BroadcastJobPhase = "Completed"
	// BroadcastJobFailedPh: the Failed condition is True.
	BroadcastJobFailedPh BroadcastJobPhase = "Failed"
	// BroadcastJobEvicted: a shard the hub withdrew from its cluster (a shard's phase
	// only): its nodes no longer count as desired.
	BroadcastJobEvicted BroadcastJobPhase = "Evicted"
)

// BroadcastCounts are the pod counters of a BroadcastJob or of one of its shards. They are
// always written, so that `kubectl get` shows 0 rather than an empty column.
type BroadcastCounts struct {
	// desired is the number of existing eligible nodes: those that keep the job's pod and
	// those still to get one. A pod whose node is gone counts elsewhere, not here.
	// +optional
	Desired int32 `json:"desired"`
	// active is the number of the job's pods that are created and not finished.
	// +optional
	Active int32 `json:"active"`
	// succeeded is the number of the job's pods that ran to completion.
	// +optional
	Succeeded int32 `json:"succeeded"`
	// failed is the number of the job's pods that failed (or exceeded restartLimit), and of
	// those the job's end stopped (FailFast, activeDeadlineSeconds, the hub), as in OpenKruise.
	// +optional
	Failed int32 `json:"failed"`
}

// ClusterBroadcastStatus is one cluster's shard of a hub BroadcastJob.
type ClusterBroadcastStatus struct {
	// clusterName is the member cluster that runs the shard.
	ClusterName     string `json:"clusterName"`
	BroadcastCounts `json:",inline"`
	// parallelism is the shard's share of the fleet-wide cap on running pods; unset when
	// there is no cap.
	// +optional
	Parallelism *int32 `json:"parallelism,omitempty"`
	// phase of the shard: Pending, Running, Paused, Completed or Failed; Evicted once the
	// hub withdrew the shard from its cluster (see eviction), when its nodes and counts no
	// longer add to the job's.
	// +optional
	Phase BroadcastJobPhase `json:"phase,omitempty"`
	// eviction says when and why the hub withdrew the shard from its cluster; set with
	// phase Evicted.
	// +optional
	Eviction *ShardEviction `json:"eviction,omitempty"`
}

// BroadcastJobStatus reports progress, fleet-wide on the hub.
type BroadcastJobStatus struct {
	// observedGeneration is the metadata.generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions: Complete, Failed, Paused, NodesEligible (False with reason
	// NoEligibleNodes, or on the hub NoEligibleClusters or NoPlacement), and on the hub
	// ShardsApplied (False with reason ApplyFailed or ShardNameTaken when a shard could not
	// be created in a member).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// phase summarises the conditions for people scanning a list: Pending (nothing is
	// eligible yet; see NodesEligible), Running, Paused, Completed or Failed.
	// +optional
	Phase BroadcastJobPhase `json:"phase,omitempty"`
	// startTime is when the job started running; activeDeadlineSeconds counts from it.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// completionTime is when the job became Completed or Failed; ttlSecondsAfterFinished
	// counts from it.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	BroadcastCounts `json:",inline"`

	// parallelism is spec.parallelism resolved to a number of pods (a percent taken of
	// desired, fleet-wide on the hub); unset when there is no cap.
	// +optional
	Parallelism *int32 `json:"parallelism,omitempty"`

	// clusters has one entry per cluster shard, with its counts and phase (hub only); past
	// MaxClusterStatuses shards, only that many (failed ones first, then unfinished ones),
	// and clustersOmitted counts the others.
	// +optional
	// +listType=map
	// +listMapKey=clusterName
	Clusters []ClusterBroadcastStatus `json:"clusters,omitempty"`
	// clustersOmitted is how many cluster shards clusters leaves out, to keep the job's
	// size bounded whatever the number of member clusters; their counts are in the totals.
	// +optional
	ClustersOmitted int32 `json:"clustersOmitted,omitempty"`
}

// BroadcastJob runs one pod to completion on every eligible node: of its own cluster when
// created in a member, of every selected member cluster when created on the hub.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=bcj,categories=muster
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.status.desired`,description="Eligible nodes: those that keep the job's pod and those still to get one"
// +kubebuilder:printcolumn:name="Active",type=integer,JSONPath=`.status.active`,description="Pods created and not finished"
// +kubebuilder:printcolumn:name="Succeeded",type=integer,JSONPath=`.status.succeeded`,description="Pods that ran to completion"
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.failed`,description="Pods that failed"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Parallelism",type=integer,JSONPath=`.status.parallelism`,priority=1,description="Cap on running pods, resolved to a number; empty when unbounded"
// +kubebuilder:printcolumn:name="Completion",type=string,JSONPath=`.spec.completionPolicy.type`,priority=1,description="When the job ends: Always or Never"
// +kubebuilder:printcolumn:name="Failure",type=string,JSONPath=`.spec.failurePolicy.type`,priority=1,description="What a failed pod does: FailFast, Continue or Pause"
// +kubebuilder:printcolumn:name="Paused",type=boolean,JSONPath=`.spec.paused`,priority=1
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63",message="BroadcastJob name must be at most 63 characters: it becomes a label value on its pods"
type BroadcastJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the pod to run on every eligible node, and on the hub where.
	Spec BroadcastJobSpec `json:"spec"`
	// status is the job's progress, fleet-wide on the hub; written by the controllers.
	// +optional
	Status BroadcastJobStatus `json:"status,omitempty"`
}

// BroadcastJobList is a list of BroadcastJobs.
//
// +kubebuilder:object:root=true
type BroadcastJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BroadcastJob `json:"items"`
}
