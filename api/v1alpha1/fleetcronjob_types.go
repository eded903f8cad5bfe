package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FleetCronJob condition types.
const (
	// FleetCronJobScheduleValid is False with a reason when the schedule or time zone
	// cannot be parsed (admission rejects these; the condition covers objects that got
	// past it, for example while the webhook was down).
	FleetCronJobScheduleValid = "ScheduleValid"
)

// ScheduledTimeAnnotation on a child records the schedule slot it was created for.
const ScheduledTimeAnnotation = "muster.dev/scheduled-time"

// ConcurrencyPolicy says what to do when a slot comes while children still run.
// +kubebuilder:validation:Enum=Allow;Forbid;Replace
type ConcurrencyPolicy string

const (
	// ConcurrencyAllow starts the new child next to the running ones.
	ConcurrencyAllow ConcurrencyPolicy = "Allow"
	// ConcurrencyForbid skips the slot while any child runs anywhere in the fleet.
	ConcurrencyForbid ConcurrencyPolicy = "Forbid"
	// ConcurrencyReplace deletes running children, in every cluster, then starts the new one.
	ConcurrencyReplace ConcurrencyPolicy = "Replace"
)

// FleetJobTemplateSpec is the template of a FleetJob child.
type FleetJobTemplateSpec struct {
	// metadata given to each child FleetJob: its labels and annotations. The name is always
	// <cron name>-<slot in Unix minutes>.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec of each child FleetJob.
	Spec FleetJobSpec `json:"spec"`
}

// BroadcastJobTemplateSpec is the template of a BroadcastJob child.
type BroadcastJobTemplateSpec struct {
	// metadata given to each child BroadcastJob: its labels and annotations. The name is
	// always <cron name>-<slot in Unix minutes>.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec of each child BroadcastJob; it needs placement to run anywhere.
	Spec BroadcastJobSpec `json:"spec"`
}

// FleetCronJobSpec is a schedule and the child it creates at each slot.
// +kubebuilder:validation:XValidation:rule="has(self.jobTemplate) != has(self.broadcastJobTemplate)",message="exactly one of jobTemplate and broadcastJobTemplate must be set"
type FleetCronJobSpec struct {
	// schedule in cron format, as batch/v1 CronJob reads it: five fields (minute hour
	// day-of-month month day-of-week, e.g. "*/15 * * * *") or a descriptor such as @hourly.
	// At most 256 characters; set the time zone with timeZone, not TZ= or CRON_TZ=.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="!self.contains('TZ=')",message="schedule must not set a time zone with TZ= or CRON_TZ=; use spec.timeZone"
	Schedule string `json:"schedule"`

	// timeZone is the IANA time zone the schedule is read in, e.g. Europe/Berlin. Unset
	// means the time zone of the hub's process (usually UTC). Condition ScheduleValid is
	// False for a zone the hub does not know.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$`
	TimeZone *string `json:"timeZone,omitempty"`

	// startingDeadlineSeconds is how many seconds after its slot a missed run may still
	// start (after a hub outage, or while concurrencyPolicy Forbid held it back); later
	// slots are skipped. Unset means no deadline. Of several missed slots only the latest
	// runs.
	// +optional
	// +kubebuilder:validation:Minimum=0
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// concurrencyPolicy says what a slot does while earlier children still run anywhere in
	// the fleet: Allow (default) starts the new child next to them; Forbid skips the slot;
	// Replace deletes the running children, in every cluster, and starts the new one.
	// +kubebuilder:default=Allow
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// suspend stops creating children while true; children already running go on. Default
	// false.
	// +kubebuilder:default=false
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// jobTemplate makes each slot create a FleetJob. Exactly one of jobTemplate and
	// broadcastJobTemplate must be set.
	// +optional
	JobTemplate *FleetJobTemplateSpec `json:"jobTemplate,omitempty"`

	// broadcastJobTemplate makes each slot create a hub BroadcastJob. Exactly one of
	// jobTemplate and broadcastJobTemplate must be set.
	// +optional
	BroadcastJobTemplate *BroadcastJobTemplateSpec `json:"broadcastJobTemplate,omitempty"`

	// successfulJobsHistoryLimit is how many successfully finished children to keep; older
	// ones are deleted with their shards. Default 3; 0 keeps none.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	// +optional
	SuccessfulJobsHistoryLimit *int32 `json:"successfulJobsHistoryLimit,omitempty"`

	// failedJobsHistoryLimit is how many failed children to keep; older ones are deleted
	// with their shards. Default 1; 0 keeps none.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	FailedJobsHistoryLimit *int32 `json:"failedJobsHistoryLimit,omitempty"`
}

// FleetCronJobStatus reports the schedule's progress.
type FleetCronJobStatus struct {
	// conditions: ScheduleValid (False with the parse error when the schedule or time zone
	// cannot be read).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// active lists the children that are still running.
	// +optional
	// +listType=atomic
	Active []corev1.ObjectReference `json:"active,omitempty"`
	// activeCount is the number of entries in active. Always written, so that `kubectl get`
	// shows 0 rather than nothing.
	// +optional
	ActiveCount int32 `json:"activeCount"`
	// lastScheduleTime is the last slot a child was created for. It is stored, never
	// rebuilt from children, so deleting a child never brings it back.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
	// lastSuccessfulTime is when a child last completed successfully.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`
	// nextScheduleTime is the next slot at which a child will be created, unless
	// suspended; unset while the schedule is invalid.
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`
}

// FleetCronJob creates FleetJobs or BroadcastJobs on a schedule owned by the hub, as a
// batch/v1 CronJob creates Jobs, with concurrency counted over the whole fleet.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=fcj,categories=muster
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="TimeZone",type=string,JSONPath=`.spec.timeZone`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Active",type=integer,JSONPath=`.status.activeCount`,description="Children still running"
// +kubebuilder:printcolumn:name="Last Schedule",type=date,JSONPath=`.status.lastScheduleTime`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Next Schedule",type=string,JSONPath=`.status.nextScheduleTime`,priority=1
// +kubebuilder:printcolumn:name="Last Success",type=date,JSONPath=`.status.lastSuccessfulTime`,priority=1
// +kubebuilder:printcolumn:name="Concurrency",type=string,JSONPath=`.spec.concurrencyPolicy`,priority=1
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 52",message="FleetCronJob name must be at most 52 characters: children append -<unix minutes>"
type FleetCronJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the schedule and the child each slot creates.
	Spec FleetCronJobSpec `json:"spec"`
	// status is the schedule's progress, written by the hub.
	// +optional
	Status FleetCronJobStatus `json:"status,omitempty"`
}

// FleetCronJobList is a list of FleetCronJobs.
//
// +kubebuilder:object:root=true
type FleetCronJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FleetCronJob `json:"items"`
}
