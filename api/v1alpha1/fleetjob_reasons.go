package v1alpha1

// Reasons of a FleetJob's conditions and events.
const (
	// FleetJobReasonPlaced is Scheduled=True (and its event): the shards are decided.
	FleetJobReasonPlaced = "Placed"
	// FleetJobReasonShardsCompleted is Complete=True: every shard's Job completed.
	FleetJobReasonShardsCompleted = "ShardsCompleted"
	// FleetJobReasonShardFailed is Failed=True when a shard failed under FailFast.
	FleetJobReasonShardFailed = "ShardFailed"
	// FleetJobReasonShardsFailed is Failed=True when every shard finished and some failed.
	FleetJobReasonShardsFailed = "ShardsFailed"
	// FleetJobReasonShardStopped is the warning event of a shard suspended because another
	// shard failed.
	FleetJobReasonShardStopped = "ShardStopped"
	// FleetJobReasonPlacedBySpread is the event of a WorkloadSpread's first division of
	// the FleetJob's replicas over its subsets.
	FleetJobReasonPlacedBySpread = "PlacedBySpread"
	// FleetJobReasonSpreadChanged is the event of a WorkloadSpread changing the replicas
	// of the FleetJob's shards.
	FleetJobReasonSpreadChanged = "SpreadChanged"
	// FleetJobReasonShardEvicted is Scheduled=False while a Single job whose shard was
	// evicted waits to be placed again, and the reason of an evicted shard's entry.
	FleetJobReasonShardEvicted = "ShardEvicted"
	// FleetJobReasonFailedOver is the event of a shard withdrawn from a cluster whose
	// NoExecute taint the placement no longer tolerates: where from, and where to.
	FleetJobReasonFailedOver = "FailedOver"
	// FleetJobReasonFailoverHeld is the warning event of an eviction that is due but held,
	// because most of the clusters the placement selects are unreachable at once.
	FleetJobReasonFailoverHeld = "FailoverHeld"
	// FleetJobReasonShardNotWritten is ShardsApplied=False (and its warning event) when the
	// hub API server refused a shard's Work (a quota, an overloaded server): the share is
	// placed again.
	FleetJobReasonShardNotWritten = "ShardNotWritten"
	// FleetJobReasonRestPlaced is the event of a share of the job placed again because no
	// shard accounted for it: a Work the hub could not write, a member removed with its
	// shards.
	FleetJobReasonRestPlaced = "RestPlaced"
)
