package identity

// The join line `musterctl join` leaves in the member and the agent reads: a Secret in the
// agent's namespace, and the annotation that ties a MemberCluster to the member it was
// joined from.
const (
	// BootstrapSecret is the Secret `musterctl join` writes in the member's muster-agent
	// namespace.
	BootstrapSecret = "muster-bootstrap"
	// KeyHubURL, KeyCA, KeyToken and KeyClusterName are its keys: where the hub answers,
	// the CA it is trusted by, the bootstrap token, and the name the cluster joins as.
	// A Secret made without musterctl (the muster-agent Helm chart) may give KeyCAHash, the
	// sha256:<hex> pin of the CA's public key, instead of KeyCA: the agent then learns the
	// CA from the hub's signed cluster-info, as musterctl join does.
	KeyHubURL      = "hub-url"
	KeyCA          = "ca.crt"
	KeyCAHash      = "ca-hash"
	KeyToken       = "token"
	KeyClusterName = "cluster-name"
	// ClusterIDAnnotation on a MemberCluster holds the member's cluster ID (the UID of its
	// kube-system namespace), so a second cluster joining under a taken name is refused.
	ClusterIDAnnotation = "muster.dev/cluster-id"
)
