package v1alpha1

// Reasons the agent's Job controller writes on batch/v1 Jobs. Muster's own is the
// PodsUnschedulable condition's; the others are the values the upstream Job controller
// writes, which k8s.io/api does not export (those it exports, such as
// batchv1.JobReasonBackoffLimitExceeded, are used from there).
const (
	// JobReasonScheduled is PodsUnschedulable=False: every active pod is scheduled.
	JobReasonScheduled = "Scheduled"
	// JobReasonSuspended is the Suspended=True condition's reason.
	JobReasonSuspended = "JobSuspended"
	// JobReasonResumed is the Suspended=False condition's reason.
	JobReasonResumed = "JobResumed"
	// JobEventReasonSuspended is the event of a Job being suspended.
	JobEventReasonSuspended = "Suspended"
	// JobEventReasonResumed is the event of a suspended Job resuming.
	JobEventReasonResumed = "Resumed"
	// JobEventReasonCompleted is the event of a Job completing.
	JobEventReasonCompleted = "Completed"
)
