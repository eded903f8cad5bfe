// Package inventory keeps the hub's view of every member node, loaded from the NodeSlices
// the agents write, in go-memdb tables indexed by cluster and by label, and answers the
// placement questions the hub controllers ask: which nodes of a cluster could run a pod
// template, and how much a cluster can allocate.
//
// The Reconciler watches NodeSlices in every member namespace. A slice's cluster is taken
// from its namespace (muster-member-<cluster>), never from its content, because an agent can
// write only in its own namespace: no agent can place nodes in another cluster's inventory.
package inventory
