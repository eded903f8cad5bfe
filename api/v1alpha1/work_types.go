package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Work and per-manifest condition types.
const (
	// WorkApplied is True when every manifest (on a manifest: that manifest) was applied
	// to the member at the Work's current generation.
	WorkApplied = "Applied"
	// WorkAvailable is True when every applied object (on a manifest: that object) exists
	// in the member.
	WorkAvailable = "Available"
)

// Manifest is one complete Kubernetes object to apply in the member, with apiVersion,
// kind and metadata.name.
type Manifest struct {
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:EmbeddedResource
	runtime.RawExtension `json:",inline"`
}

// DeletePropagation says what happens to applied objects when their Work is deleted.
// +kubebuilder:validation:Enum=Delete;Orphan
type DeletePropagation string

const (
	// DeletePropagationDelete deletes every applied object before the Work goes away.
	DeletePropagationDelete DeletePropagation = "Delete"
	// DeletePropagationOrphan leaves applied objects in the member.
	DeletePropagationOrphan DeletePropagation = "Orphan"
)

// DeleteOption controls clean-up of applied objects.
type DeleteOption struct {
	// propagationPolicy says what deleting the Work does to the objects it applied: Delete
	// (default) deletes them in the member before the Work goes away; Orphan leaves them.
	// +kubebuilder:default=Delete
	// +optional
	PropagationPolicy DeletePropagation `json:"propagationPolicy,omitempty"`
}

// ApplyOption controls how manifests are applied.
type ApplyOption struct {
	// forceConflicts takes ownership of fields that another field manager in the member
	// owns. Without it a conflict is reported on the manifest and the object is left alone.
	// +optional
	ForceConflicts bool `json:"forceConflicts,omitempty"`
}

// ResourceIdentifier names one object in a member cluster.
type ResourceIdentifier struct {
	// group of the object's kind, e.g. batch; empty for the core group.
	// +optional
	Group string `json:"group,omitempty"`
	// version of the object's kind, e.g. v1.
	// +optional
	Version string `json:"version,omitempty"`
	// kind of the object, e.g. Job.
	Kind string `json:"kind"`
	// namespace of the object; empty for cluster-scoped objects.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// name of the object.
	Name string `json:"name"`
}

// FeedbackMode says which part of an applied object's status comes back to the hub.
// +kubebuilder:validation:Enum=Status;JSONPaths;None
type FeedbackMode string

const (
	// FeedbackStatus returns the whole .status, truncated to the agent's size cap.
	FeedbackStatus FeedbackMode = "Status"
	// FeedbackJSONPaths returns only the listed JSONPath values.
	FeedbackJSONPaths FeedbackMode = "JSONPaths"
	// FeedbackNone returns nothing beyond the conditions.
	FeedbackNone FeedbackMode = "None"
)

// JSONPathRule names one value to return.
type JSONPathRule struct {
	// name under which the value is reported in status.manifests[].values; at most 63
	// characters, unique within the rule.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// path is a JSONPath into the applied object, e.g. .status.succeeded, as kubectl's
	// -o jsonpath reads it without the braces; at most 512 characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Path string `json:"path"`
}

// FeedbackRule overrides status feedback for the manifests it identifies.
// +kubebuilder:validation:XValidation:rule="self.mode == 'JSONPaths' ? size(self.jsonPaths) > 0 : !has(self.jsonPaths) || size(self.jsonPaths) == 0",message="jsonPaths is required with mode JSONPaths and not allowed otherwise"
type FeedbackRule struct {
	// resource identifies the manifest the rule applies to by group, kind, namespace and
	// name.
	Resource ResourceIdentifier `json:"resource"`
	// mode is what comes back to the hub for the manifest: Status (default) the whole
	// .status, truncated to the agent's size cap; JSONPaths only the values jsonPaths
	// names; None nothing beyond the conditions.
	// +kubebuilder:default=Status
	Mode FeedbackMode `json:"mode"`
	// jsonPaths lists the values returned with mode JSONPaths, at most 32; required with
	// that mode and not allowed otherwise.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	JSONPaths []JSONPathRule `json:"jsonPaths,omitempty"`
}

// WorkSpec is what the hub wants applied in one member cluster.
type WorkSpec struct {
	// manifests are the objects to apply in the member, in order, at most 500. The agent
	// applies each with server-side apply and labels it with the Work's name.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=500
	Manifests []Manifest `json:"manifests,omitempty"`

	// deleteOption controls what deleting the Work does to applied objects. Unset means
	// Delete.
	// +optional
	DeleteOption *DeleteOption `json:"deleteOption,omitempty"`

	// applyOption controls how manifests are applied. Unset means no forced conflicts.
	// +optional
	ApplyOption *ApplyOption `json:"applyOption,omitempty"`

	// feedbackRules override, per manifest, which part of the applied object's status comes
	// back in status.manifests; manifests without a rule return their whole .status. At
	// most 500.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=500
	FeedbackRules []FeedbackRule `json:"feedbackRules,omitempty"`
}

// FeedbackValue is one value returned by a JSONPaths rule.
type FeedbackValue struct {
	// name of the JSONPath rule that produced the value.
	Name string `json:"name"`
	// value found at the rule's path, as JSON.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Value runtime.RawExtension `json:"value"`
}

// ManifestStatus is the state of one manifest in the member.
type ManifestStatus struct {
	// ordinal is the manifest's index in spec.manifests.
	Ordinal int32 `json:"ordinal"`
	// resource identifies the applied object.
	Resource ResourceIdentifier `json:"resource"`
	// conditions: Applied (with the API server's message when applying failed) and
	// Available.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// observedGeneration is the member object's metadata.generation last seen.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// status is the member object's .status (feedback mode Status), size-capped by the
	// agent.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Status *runtime.RawExtension `json:"status,omitempty"`
	// values are the results of a JSONPaths feedback rule.
	// +optional
	// +listType=atomic
	Values []FeedbackValue `json:"values,omitempty"`
}

// WorkStatus is fed back by the member's agent.
type WorkStatus struct {
	// observedGeneration is the Work's metadata.generation the agent last applied; the
	// conditions describe that generation.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions: Applied and Available, summarising every manifest.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// manifests reports each manifest: its object, conditions and status feedback.
	// +optional
	// +listType=atomic
	Manifests []ManifestStatus `json:"manifests,omitempty"`
}

// Work carries manifests from the hub to one member cluster; it lives in that member's
// muster-member-<cluster> namespace and its status is written by that member's agent.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=muster
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.metadata.labels.muster\.dev/cluster`,description="The member cluster the Work is for (label muster.dev/cluster)"
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.manifests[0].kind`,description="Kind of the first manifest"
// +kubebuilder:printcolumn:name="Applied",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].status`,description="Whether every manifest is applied at the current generation"
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`,description="Whether every applied object exists in the member"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Object",type=string,JSONPath=`.spec.manifests[0].metadata.name`,priority=1,description="Name of the first manifest's object"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].reason`,priority=1,description="Why the manifests are or are not applied"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63",message="Work name must be at most 63 characters: the agent labels applied objects with it"
type Work struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what the hub wants applied in the member.
	// +optional
	Spec WorkSpec `json:"spec,omitempty"`
	// status is fed back by the member's agent.
	// +optional
	Status WorkStatus `json:"status,omitempty"`
}

// WorkList is a list of Works.
//
// +kubebuilder:object:root=true
type WorkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Work `json:"items"`
}
