package v1alpha1

// Reasons of a MemberCluster's conditions and events.
const (
	// MemberClusterReasonAccepted is Accepted=True (and its event): an administrator
	// accepted the cluster.
	MemberClusterReasonAccepted = "ClusterAccepted"
	// MemberClusterReasonNotAccepted is Accepted=False: waiting for `musterctl accept`.
	MemberClusterReasonNotAccepted = "ClusterNotAccepted"
	// MemberClusterReasonAccessRevoked is the warning event of the agent's RBAC bindings
	// removed after the cluster lost its acceptance.
	MemberClusterReasonAccessRevoked = "ClusterAccessRevoked"
	// MemberClusterReasonAgentConnected is Joined=True: the agent reached the hub.
	MemberClusterReasonAgentConnected = "AgentConnected"
	// MemberClusterReasonAgentRenewing is Available=True: the agent renews its lease.
	MemberClusterReasonAgentRenewing = "AgentRenewing"
	// MemberClusterReasonAgentStoppedRenewing is Available=False: the lease expired.
	MemberClusterReasonAgentStoppedRenewing = "AgentStoppedRenewing"
	// MemberClusterReasonLeaseNotFound is Available=Unknown before the first renewal.
	MemberClusterReasonLeaseNotFound = "LeaseNotFound"
	// MemberClusterReasonAvailable is the event of Available turning True.
	MemberClusterReasonAvailable = "ClusterAvailable"
	// MemberClusterReasonUnreachable is the warning event of Available turning False.
	MemberClusterReasonUnreachable = "ClusterUnreachable"
	// MemberClusterReasonUnsupportedAgentVersion is the warning event of
	// AgentVersionSupported turning False; the condition's reasons are api/versionskew's.
	MemberClusterReasonUnsupportedAgentVersion = "UnsupportedAgentVersion"
	// MemberClusterReasonInventoryWithinLimit is InventoryComplete=True: the hub keeps every
	// node the member reports.
	MemberClusterReasonInventoryWithinLimit = "InventoryWithinLimit"
	// MemberClusterReasonInventoryLimitReached is InventoryComplete=False (and its warning
	// event): the member reports more nodes than the hub keeps for one member.
	MemberClusterReasonInventoryLimitReached = "InventoryLimitReached"
)
