package v1alpha1

// Condition and event reasons that several kinds share, one name each. A kind's own
// reasons sit in its <kind>_reasons.go.
const (
	// ReasonApplied is a Work manifest's Applied=True (server-side apply succeeded) and a
	// FleetJob's or BroadcastJob's ShardsApplied=True (every shard's Work is applied).
	ReasonApplied = "Applied"
	// ReasonApplying is ShardsApplied=False while some shard's Work is not applied yet.
	ReasonApplying = "Applying"
	// ReasonApplyFailed is ShardsApplied=False when a member refused a shard, and a Work
	// manifest's Applied=False (or Available=Unknown) when its apply failed.
	ReasonApplyFailed = "ApplyFailed"
	// ReasonSchedulable is PodsSchedulable=True (no shard pod waits for a node) and a
	// WorkloadSpread subset's Schedulable=True.
	ReasonSchedulable = "Schedulable"
	// ReasonUnschedulable is PodsSchedulable=False and a member Job's
	// PodsUnschedulable=True: some pods wait for a node.
	ReasonUnschedulable = "Unschedulable"
	// ReasonShardNameTaken is FleetJob Scheduled=False (and its event) and BroadcastJob
	// ShardsApplied=False when another object's Work holds the shard's Work name.
	ReasonShardNameTaken = "ShardNameTaken"
	// ReasonNoEligibleClusters is FleetJob Scheduled=False and hub BroadcastJob
	// NodesEligible=False when the placement admits no cluster.
	ReasonNoEligibleClusters = "NoEligibleClusters"
	// ReasonSuccessfulCreate is the event of created pods (BroadcastJob, Job) or of a
	// FleetCronJob's created run; the value Kubernetes' own controllers use.
	ReasonSuccessfulCreate = "SuccessfulCreate"
	// ReasonFailedCreate is the warning event of a failed pod or run creation.
	ReasonFailedCreate = "FailedCreate"
	// ReasonSuccessfulDelete is the event of deleted pods (BroadcastJob, Job) or of a
	// FleetCronJob run deleted by concurrencyPolicy Replace or the history limits.
	ReasonSuccessfulDelete = "SuccessfulDelete"
	// ReasonAgentKeyMismatch is the reason of a denied agent certificate request whose key
	// is not the one the cluster's credential is bound to, and of the MemberCluster's event.
	ReasonAgentKeyMismatch = "AgentKeyMismatch"
	// ReasonAgentJoinMismatch is the reason of a denied agent certificate request that
	// renews a certificate of another join than the cluster's current one (one issued
	// before a deny, unjoin, rekey or re-join), and of the MemberCluster's event.
	ReasonAgentJoinMismatch = "AgentJoinMismatch"
	// ReasonCertificateLifetime is the reason of a denied agent certificate request that
	// asks for no lifetime or a longer one than the hub's maximum, and of the event.
	ReasonCertificateLifetime = "CertificateLifetimeTooLong"
	// ReasonStatusWriteRefused is the Warning event of an object whose status (or spec)
	// write by a Muster controller the API server refused as invalid: a bug the write is
	// retried for with a growing backoff, not at full speed.
	ReasonStatusWriteRefused = "StatusWriteRefused"
)
