package v1alpha1

// Names shared by the hub, the agents and musterctl.
const (
	// HubNamespace is where the hub is installed.
	HubNamespace = "muster-system"
	// AgentNamespace is where the agent is installed in every member cluster.
	AgentNamespace = "muster-agent"
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
