package v1alpha1

import batchv1 "k8s.io/api/batch/v1"

// Names shared by the hub, the agents and musterctl.
const (
	// HubNamespace is where the hub is installed.
	HubNamespace = "muster-system"
	// AgentNamespace is where the agent is installed in every member cluster.
	AgentNamespace = "muster-agent"
	// WorkExecutor is the ServiceAccount, in AgentNamespace, that `musterctl join` installs
	// and the agent impersonates to apply Works: the member's admin decides what it may do.
	WorkExecutor = "muster-work-executor"
	// MemberNamespacePrefix prefixes the hub namespace that holds one member's Works,
	// NodeSlices and Lease: muster-member-<cluster>.
	MemberNamespacePrefix = "muster-member-"

	// AgentManagedBy is the spec.managedBy value of batch/v1 Jobs that the agent's Job
	// controller runs instead of kube-controller-manager.
	AgentManagedBy = "muster.dev/agent"

	// ClusterNameLabel names the member cluster an object belongs to or came from.
	ClusterNameLabel = "muster.dev/cluster"

	// WorkCleanupFinalizer holds a Work until its agent deleted the objects it applied; the
	// hub removes it for clusters that left the fleet.
	WorkCleanupFinalizer = "muster.dev/member-cleanup"

	// UnreachableTaintKey is set on a MemberCluster whose agent stopped renewing its Lease.
	UnreachableTaintKey = "muster.dev/unreachable"
)

// MemberNamespace returns the hub namespace of one member cluster.
func MemberNamespace(cluster string) string { return MemberNamespacePrefix + cluster }

// ControllerLabel marks the pods the agent's controllers create, with the controller's
// name (broadcastjob, job): the agent caches only those pods.
const ControllerLabel = "muster.dev/controller"

// BroadcastJob labels and annotations.
const (
	// BroadcastJobNameLabel and BroadcastJobUIDLabel mark the pods of a member BroadcastJob
	// and the Works that carry a hub BroadcastJob's shards.
	BroadcastJobNameLabel = "muster.dev/broadcastjob-name"
	BroadcastJobUIDLabel  = "muster.dev/broadcastjob-uid"
	// BroadcastJobNamespaceLabel names a hub BroadcastJob's namespace on its shards' Works.
	BroadcastJobNamespaceLabel = "muster.dev/broadcastjob-namespace"

	// NodeAnnotation names the node a BroadcastJob pod is bound to before the scheduler
	// sets spec.nodeName.
	NodeAnnotation = "muster.dev/node"

	// RestartLimitExceededAnnotation marks a pod that restarted more often than the
	// job's failurePolicy.restartLimit: it counts as failed from then on.
	RestartLimitExceededAnnotation = "muster.dev/restart-limit-exceeded"

	// PausedAtFailuresAnnotation records the failed-pod count at which failurePolicy Pause
	// last paused the job, so unpausing does not pause again for the same failures.
	PausedAtFailuresAnnotation = "muster.dev/paused-at-failures"

	// TerminateAnnotation, set by the hub on a shard, fails the shard with the
	// annotation's value as the message and deletes its active pods: the hub's way to
	// apply a fleet-wide FailFast or deadline to every cluster.
	TerminateAnnotation = "muster.dev/terminate"

	// ShardsFinalizer holds a hub object until the Works carrying its shards are gone.
	ShardsFinalizer = "muster.dev/shards"
)

// FleetJob labels and annotations.
const (
	// FleetJobNameLabel, FleetJobNamespaceLabel and FleetJobUIDLabel mark the Works that
	// carry a FleetJob's shards, and the shard Jobs.
	FleetJobNameLabel      = "muster.dev/fleetjob-name"
	FleetJobNamespaceLabel = "muster.dev/fleetjob-namespace"
	FleetJobUIDLabel       = "muster.dev/fleetjob-uid"

	// IndexOffsetAnnotation, on a shard of a divided Indexed FleetJob, is the first
	// fleet-wide completion index of the shard: its pod for local index i runs fleet index
	// offset+i, in JOB_COMPLETION_INDEX, its hostname and GlobalIndexAnnotation.
	IndexOffsetAnnotation = "muster.dev/index-offset"
	GlobalIndexAnnotation = "muster.dev/completion-index"
	// CompletionIndexesAnnotation, on a shard that runs the unfinished part of an evicted
	// one, is the fleet-wide completion indexes it runs, in the "1,3-5" form: its pod for
	// local index i runs the i-th of them, shown as IndexOffsetAnnotation's are.
	CompletionIndexesAnnotation = "muster.dev/completion-indexes"

	// FenceAfterAnnotation, on a shard Job whose template has podReplacementPolicy:
	// Failed, is how long (a Go duration) its agent may go without renewing its hub Lease
	// before it stops the Job, so that the hub, which moves the shard only later, never
	// runs it in two clusters at once. The Job then fails with reason JobReasonFenced.
	FenceAfterAnnotation = "muster.dev/fence-after"
	// JobReasonFenced is the reason of the condition that ends a shard Job its agent
	// stopped because it lost the hub for longer than FenceAfterAnnotation allows.
	JobReasonFenced = "Fenced"

	// PartLabel, on a Work that carries the unfinished part of an evicted shard of a
	// Divided FleetJob, tells it from the job's other shard in the same cluster: every
	// part placed for one eviction has the same, derived from the evicted Work.
	PartLabel = "muster.dev/part"
	// ReplacesAnnotation, on such a Work, is the UID of the evicted shard's Work; while
	// that Work is still counted, its eviction is recorded before anything else.
	ReplacesAnnotation = "muster.dev/replaces"
	// CarriedSucceededAnnotation, on one Work of each eviction's parts, is how many pods
	// of the evicted shard (and of those it replaced) succeeded: they stay counted in the
	// FleetJob's status once, with the part that carries them.
	CarriedSucceededAnnotation = "muster.dev/carried-succeeded"
	// CarriedIndexesAnnotation, on the Work that carries succeeded pods of an Indexed job,
	// is the set of the fleet's completion indexes they completed ("0-2,5"), so that a
	// rest placed again leaves them out.
	CarriedIndexesAnnotation = "muster.dev/carried-indexes"

	// RemovedClusterKey names, in an evicted shard's message, a member cluster deleted
	// from the fleet; DeniedClusterKey one whose MemberCluster is no longer accepted. Each
	// moves the cluster's work at once, as a NoExecute taint of that key that no
	// placement tolerates.
	RemovedClusterKey = "muster.dev/removed"
	DeniedClusterKey  = "muster.dev/denied"

	// SubsetLabel names the WorkloadSpread subset of a FleetJob shard, on its Work and Job.
	SubsetLabel = "muster.dev/subset"

	// JobPodsUnschedulable is a condition the agent's Job controller keeps on a Job: True
	// while some of its active pods cannot be scheduled, with lastTransitionTime the moment
	// the longest-waiting of them became unschedulable. An Adaptive WorkloadSpread moves
	// the shard's pods elsewhere when it stays True past rescheduleCriticalSeconds.
	JobPodsUnschedulable batchv1.JobConditionType = "PodsUnschedulable"
)
