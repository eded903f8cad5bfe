package v1alpha1

// Reasons of a BroadcastJob's conditions and events, in the member and on the hub.
const (
	// BroadcastJobReasonCompleted is Complete=True (and its event): every wanted pod
	// finished as the completion policy asks (with failures, under failurePolicy Continue).
	BroadcastJobReasonCompleted = "Completed"
	// BroadcastJobReasonPodsFailed is Failed=True when every pod finished and some failed,
	// under failurePolicy Pause (FailFast fails at the first, Continue completes).
	BroadcastJobReasonPodsFailed = "PodsFailed"
	// BroadcastJobReasonPodFailed is Failed=True when a pod failed under failurePolicy
	// FailFast.
	BroadcastJobReasonPodFailed = "PodFailed"
	// BroadcastJobReasonDeadlineExceeded is Failed=True once activeDeadlineSeconds passed.
	BroadcastJobReasonDeadlineExceeded = "DeadlineExceeded"
	// BroadcastJobReasonTerminated is a member BroadcastJob's Failed=True when the hub
	// ended it through the terminate annotation.
	BroadcastJobReasonTerminated = "Terminated"
	// BroadcastJobReasonPaused is Paused=True because spec.paused is true.
	BroadcastJobReasonPaused = "Paused"
	// BroadcastJobReasonPausedOnFailure is Paused=True (and its warning event) after a
	// failure under failurePolicy Pause.
	BroadcastJobReasonPausedOnFailure = "PausedOnFailure"
	// BroadcastJobReasonNotPaused is Paused=False: the job creates pods.
	BroadcastJobReasonNotPaused = "NotPaused"
	// BroadcastJobReasonResumed is the event of Paused turning False.
	BroadcastJobReasonResumed = "Resumed"
	// BroadcastJobReasonNoEligibleNodes is NodesEligible=False: no node fits the pod.
	BroadcastJobReasonNoEligibleNodes = "NoEligibleNodes"
	// BroadcastJobReasonNodesEligible is NodesEligible=True.
	BroadcastJobReasonNodesEligible = "NodesEligible"
	// BroadcastJobReasonNoPlacement is a hub BroadcastJob's NodesEligible=False when it has
	// no spec.placement.
	BroadcastJobReasonNoPlacement = "NoPlacement"
	// BroadcastJobReasonShardEvicted is the reason of a shard withdrawn from a cluster
	// whose NoExecute taint the placement no longer tolerates; BroadcastJobReasonFailedOver
	// the event that says so, and BroadcastJobReasonFailoverHeld the warning event of an
	// eviction held because most of the clusters the placement selects are unreachable.
	BroadcastJobReasonShardEvicted = "ShardEvicted"
	BroadcastJobReasonFailedOver   = "FailedOver"
	BroadcastJobReasonFailoverHeld = "FailoverHeld"
	// BroadcastJobReasonRestartLimitExceeded is the warning event of a pod stopped and
	// counted as failed after more restarts than restartLimit.
	BroadcastJobReasonRestartLimitExceeded = "RestartLimitExceeded"
)
