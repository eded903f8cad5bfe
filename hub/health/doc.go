// Package health decides whether member clusters are reachable. Every agent renews the
// Lease muster-agent in its hub namespace; when this hub has seen no renewal for longer
// than the grace period (measured on its own clock, from when it saw each renewal) the
// reconciler sets the MemberCluster's Available condition to Unknown and adds the taints
// muster.dev/unreachable:NoSchedule, so that no new work is placed there, and
// muster.dev/unreachable:NoExecute, which moves work off the cluster once a fleet object's
// toleration of it runs out (see placement/clusters.EvictAt); it takes them back when
// renewals resume. It owns the Available condition and those taints, and stamps timeAdded
// on any NoExecute taint that has none, since eviction counts from it.
package health
