// Package provider defines what a cluster provider does for an e2e fleet; the local (kwok)
// and kind providers implement it.
package provider

import (
	"context"
	"time"
)

// Role distinguishes the hub from member clusters; providers configure them differently
// (the hub signs client certificates and accepts bootstrap tokens).
type Role string

const (
	RoleHub    Role = "hub"
	RoleMember Role = "member"
)

// ClusterSpec describes one cluster to create.
type ClusterSpec struct {
	Name string
	Role Role
	// Nodes is how many worker nodes the cluster starts with: fake kwok nodes for the local
	// provider, node containers for kind.
	Nodes int
	// SigningDuration caps the lifetime of the client certificates the hub signs (zero:
	// the control plane's default); short ones let tests watch agents rotate.
	SigningDuration time.Duration
}

// ClusterProvider creates and deletes the clusters of a fleet.
type ClusterProvider interface {
	// Name is the provider's name as given in MUSTER_E2E_PROVIDER.
	Name() string
	// CreateCluster starts a cluster, writes its admin kubeconfig to kubeconfigPath and
	// returns once its API server serves requests.
	CreateCluster(ctx context.Context, spec ClusterSpec, kubeconfigPath string) error
	// DeleteCluster stops a cluster and removes its state; deleting a cluster that does
	// not exist is not an error.
	DeleteCluster(ctx context.Context, name, kubeconfigPath string) error
}

// ConcurrentCreator is a ClusterProvider whose CreateCluster may run for several clusters
// of a fleet at once. A cluster's control plane starts mostly by waiting (measured on the
// local provider: 29 CPU-seconds of two cores in 39 s for three clusters one after another),
// so starting them together is faster where their ports and files cannot collide.
type ConcurrentCreator interface {
	CreatesConcurrently() bool
}
