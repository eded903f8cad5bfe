// Package health decides whether member clusters are reachable. Every agent renews the
// Lease muster-agent in its hub namespace; when a renewal is older than the grace period
// the reconciler sets the MemberCluster's Available condition to Unknown and adds the
// taint muster.dev/unreachable:NoSchedule, so that no new work is placed there, and takes
// both back when renewals resume. Running work is left alone. It owns the Available
// condition and that taint.
package health
