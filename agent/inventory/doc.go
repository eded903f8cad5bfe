// Package inventory reports the member's nodes to the hub. On node changes (throttled to
// one report per second) and every five minutes, it rewrites the NodeSlices in the
// cluster's hub namespace, at most 500 nodes per slice, and the MemberCluster's status:
// Kubernetes version, node counts, allocatable totals, the Joined condition and the time
// of the report, refreshed by every resync so the hub can tell when the agent went silent.
package inventory
